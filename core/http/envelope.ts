import * as v from 'valibot';

/** The body of every JSON response: `{ meta?, errors?, result? }`. */
export interface Envelope<T> {
  meta?: Record<string, unknown>;
  errors?: Array<{ httpcode: number; message: string }>;
  result?: T;
}

export const ok = <T>(result: T): { result: T } => ({ result });

export const errorEnvelope = (status: number, message: string) => ({
  errors: [{ httpcode: status, message }],
});

/** Schemas for the OpenAPI document. */
export const ErrorEnvelopeSchema = v.object({
  errors: v.array(v.object({ httpcode: v.pipe(v.number(), v.integer()), message: v.string() })),
});
export const resultOf = <S extends v.GenericSchema>(schema: S) => v.object({ result: schema });

export const errorResponses = {
  400: ErrorEnvelopeSchema,
  401: ErrorEnvelopeSchema,
  403: ErrorEnvelopeSchema,
  404: ErrorEnvelopeSchema,
} as const;

/** What a state-changing route may answer beyond its own: 408 past the consistency timeout, 413 too big. */
export const writeErrorResponses = { 408: ErrorEnvelopeSchema, 413: ErrorEnvelopeSchema } as const;
