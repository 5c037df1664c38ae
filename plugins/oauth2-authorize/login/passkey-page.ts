// The hosted login's passkey parts: one form per ceremony, its options as a JSON data block, and the
// one script (allowed by its hash) that runs navigator.credentials.get or .create and posts the answer.

import type { PasskeyCeremony } from '../../../core/capabilities/hosted-login-passkeys.ts';
import { hostedPage, styleSourceOf } from '../../../core/http/hosted-page.ts';
import { escapeHtml } from '../../../core/http/html.ts';
import type { PageLook } from './page-look.ts';

/**
 * The script: reads the options of the form `#passkey`, shows the form (hidden without script or
 * WebAuthn), runs the ceremony on its button (and, for a sign-in form marked `data-conditional`, as
 * passkey autofill where the browser has conditional mediation), then posts the credential's JSON.
 */
const SCRIPT = `(()=>{const f=document.getElementById('passkey'),d=document.getElementById('passkey-options'),P=window.PublicKeyCredential;if(!f||!d||!P||!P.parseRequestOptionsFromJSON)return;f.hidden=false;const o=JSON.parse(d.textContent),make=f.dataset.ceremony==='create',err=f.querySelector('.passkey-error');let c;const go=async(m)=>{if(c)c.abort();const a=c=new AbortController();try{const k=make?await navigator.credentials.create({publicKey:P.parseCreationOptionsFromJSON(o),signal:a.signal}):await navigator.credentials.get({publicKey:P.parseRequestOptionsFromJSON(o),signal:a.signal,...(m?{mediation:m}:{})});f.elements.response.value=JSON.stringify(k.toJSON());f.submit()}catch(e){if(a===c&&!m)err.hidden=false}};f.querySelector('button').addEventListener('click',(e)=>{e.preventDefault();go()});if(f.dataset.conditional&&P.isConditionalMediationAvailable)P.isConditionalMediationAvailable().then((y)=>{if(y)go('conditional')})})()`;

let scriptHash: Promise<string> | undefined;

/** The CSP source that allows the passkey script, and nothing else: its SHA-256. */
export const passkeyScriptSource = (): Promise<string> => {
  scriptHash ??= styleSourceOf(SCRIPT);
  return scriptHash;
};

/** JSON inside a `<script type="application/json">`: no `<` that could end the element. */
const dataBlock = (value: object) =>
  `<script type="application/json" id="passkey-options">${JSON.stringify(value).replace(/</g, '\\u003c')}</script>`;

export interface PasskeyFormInput {
  /** Where the answer posts. */
  action: string;
  csrfToken: string;
  ceremony: PasskeyCeremony;
  kind: 'get' | 'create';
  label: string;
  /** A sign-in form: passkey autofill on the handle field too. */
  conditional?: boolean;
  /** More hidden fields (name, value). */
  fields?: Record<string, string>;
}

/** The form a passkey ceremony answers, its options and the script: hidden until the script shows it. */
export function passkeyForm(input: PasskeyFormInput): string {
  const fields = Object.entries(input.fields ?? {})
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
  return `<form id="passkey" class="passkey" method="post" action="${escapeHtml(input.action)}" data-ceremony="${input.kind}"${input.conditional ? ' data-conditional="1"' : ''} hidden>
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">
<input type="hidden" name="challenge_id" value="${escapeHtml(input.ceremony.challengeId)}">
<input type="hidden" name="response" value="">${fields ? `\n${fields}` : ''}
<button type="submit">${escapeHtml(input.label)}</button>
<p class="note passkey-error" role="alert" hidden>The passkey was not used. Try again, or continue another way.</p>
</form>
${dataBlock(input.ceremony.options)}
<script>${SCRIPT}</script>`;
}

export interface PasskeyOfferInput {
  clientName: string;
  /** PUBLIC_BASE_URL + /oauth2/authorize/passkey/offer. */
  action: string;
  csrfToken: string;
  ceremony: PasskeyCeremony;
  error?: string | undefined;
}

/** After a sign-in: "Add a passkey?", with a button that registers one and a "Not now". */
export function passkeyOfferPage(input: PasskeyOfferInput, look: PageLook, head = ''): string {
  const error = input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>\n` : '';
  return hostedPage(
    look.title,
    `<h1>Add a passkey?</h1>
${error}<p class="note">Next time, sign in to ${escapeHtml(input.clientName)} with your fingerprint, face or screen lock instead of a password.</p>
${passkeyForm({
  action: input.action,
  csrfToken: input.csrfToken,
  ceremony: input.ceremony,
  kind: 'create',
  label: 'Add a passkey',
  fields: { decision: 'add' },
})}
<form method="post" action="${escapeHtml(input.action)}" class="sso">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">
<input type="hidden" name="decision" value="skip">
<button type="submit">Not now</button>
</form>`,
    head,
  );
}
