import { base64url, sha256 } from '../../../core/ids.ts';

/** How a secret handed out (login, code, refresh token) is stored and found: its SHA-256, base64url. */
export const digest = async (secret: string): Promise<string> => base64url(await sha256(secret));

/** Space-delimited scopes as stored, and back. */
export const scopeText = (scopes: readonly string[]): string => scopes.join(' ');
export const scopeList = (text: string): string[] => (text ? text.split(' ') : []);
