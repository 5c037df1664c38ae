import * as v from 'valibot';

const edgeEventDoc = {
  type: 'object' as const,
  required: ['event_name'],
  additionalProperties: true,
  properties: {
    event_name: {
      type: 'string' as const,
      enum: [
        'GateServerStarted_v1',
        'GateRequestHandled_v1',
        'GateRequestCredentialFound_v1',
        'MitmAttackDetected_v1',
        'MitmAttackDetectedV1',
      ],
      description:
        "The catalogue name of the event; the event's members beside it, as the catalogue lists them.",
    },
  },
};

/** POST /edge/events (read by the route itself), written out for the OpenAPI document. */
export const edgeEventsBodyDoc = (maxEvents: number) => ({
  required: true,
  description: `One edge event, or an array of 1 to ${maxEvents}.`,
  content: {
    'application/json': {
      schema: {
        oneOf: [
          edgeEventDoc,
          { type: 'array' as const, items: edgeEventDoc, minItems: 1, maxItems: maxEvents },
        ],
      },
    },
  },
});

export const AcceptedResult = v.object({
  result: v.object({
    accepted: v.pipe(v.number(), v.description('How many events were published.')),
    event_ids: v.pipe(v.array(v.string()), v.description('Their event_id, in the order sent.')),
  }),
});
