import { ServiceError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { limitRequestBody } from './body.ts';
import { errorEnvelope } from './envelope.ts';
import { requestIdOf } from './request-id.ts';
import { routableRequest, urlPathOf } from './request-target.ts';

export interface FrontDoorOptions {
  /** The request body limit in bytes. */
  bodyLimit: number;
  log: Logger;
}

/**
 * What every request passes before the app: a URL the router can use whatever the Host header said,
 * and the body limit; and where each answer is logged, with the status it really had. A refusal here
 * is the usual envelope, with a request id and a log line.
 */
export function frontDoor(handle: (request: Request) => Promise<Response>, options: FrontDoorOptions) {
  const { bodyLimit, log } = options;
  return (request: Request): Promise<Response> => {
    let admitted: Request;
    try {
      admitted = limitRequestBody(routableRequest(request), bodyLimit);
    } catch (e) {
      const status = e instanceof ServiceError ? e.status : 400;
      const message = e instanceof ServiceError ? e.message : 'the request could not be read';
      const id = requestIdOf(request.headers);
      log.info('request', {
        request_id: id,
        method: request.method,
        path: urlPathOf(request.url),
        status,
        ms: 0,
      });
      return Promise.resolve(
        Response.json(errorEnvelope(status, message), { status, headers: { 'x-request-id': id } }),
      );
    }
    if (!log.enabled('info')) return handle(admitted);
    const start = performance.now();
    return handle(admitted).then((response) => {
      log.info('request', {
        request_id: response.headers.get('x-request-id'),
        method: request.method,
        path: urlPathOf(request.url),
        status: response.status,
        ms: Math.round((performance.now() - start) * 100) / 100,
      });
      return response;
    });
  };
}
