import { API_KEY_SECURITY, errorDoc, writeErrorDocs } from '../../../core/http/openapi-docs.ts';

/** The OpenAPI tag of every attribute route. */
export const TAGS = ['Organization Attributes'];
/** Every attribute route takes the organization's ID and API key. */
export const SECURITY = API_KEY_SECURITY;
/**
 * The answers of a write, written out for the OpenAPI document: a 204 has no body, which a response
 * schema cannot say, so write routes list their responses in `detail` instead.
 */
export const writeResponses = {
  204: { description: 'No content: the write is durable and visible to every replica' },
  400: errorDoc('Bad request: the body, a query parameter or a consistency header breaks a rule'),
  401: errorDoc('No API key, or not a valid one'),
  403: errorDoc('A bucket this organization may not write, or a key of another organization'),
  404: errorDoc('No such bucket in this organization'),
  ...writeErrorDocs,
};
