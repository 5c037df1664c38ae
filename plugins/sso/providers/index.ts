import { apple } from './apple.ts';
import { azuread } from './azuread.ts';
import { bitbucket } from './bitbucket.ts';
import { facebook } from './facebook.ts';
import { github } from './github.ts';
import { gitlab } from './gitlab.ts';
import { google } from './google.ts';
import { line } from './line.ts';
import { okta } from './okta.ts';

export { apple, azuread, bitbucket, facebook, github, gitlab, google, line, okta };

/** The nine built-in providers, in the spec's order: the default of `sso({ providers })`. */
export const builtInProviders = [
  google,
  github,
  bitbucket,
  gitlab,
  facebook,
  line,
  azuread,
  okta,
  apple,
] as const;
