import { bareHost, classifyAddress, isLocalhostName } from '../../../core/net/address.ts';

/** `localhost`, a name under `.localhost`, or a loopback IP literal (127.0.0.0/8, ::1). */
export function isLoopbackHost(hostname: string): boolean {
  if (isLocalhostName(hostname)) return true;
  return classifyAddress(bareHost(hostname))?.range === 'loopback';
}

/** An https URL, or an http one on a loopback host when `loopback` allows it; no credentials or fragment. */
export function isSecureUrl(text: string, loopback: boolean): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  if (url.username || url.password || url.hash) return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && loopback && isLoopbackHost(url.hostname);
}
