import * as v from 'valibot';

/** One edge event as a component sends it (documentation; the route checks the body itself). */
export const EdgeEventDoc = v.looseObject({
  event_name: v.pipe(
    v.picklist([
      'GateServerStarted_v1',
      'GateRequestHandled_v1',
      'GateRequestCredentialFound_v1',
      'MitmAttackDetected_v1',
      'MitmAttackDetectedV1',
    ]),
    v.description(
      "The catalogue name of the event; the event's members beside it, as the catalogue lists them.",
    ),
  ),
});

export const EdgeEventsDoc = v.union([EdgeEventDoc, v.array(EdgeEventDoc)]);

export const AcceptedResult = v.object({
  result: v.object({
    accepted: v.pipe(v.number(), v.description('How many events were published.')),
    event_ids: v.pipe(v.array(v.string()), v.description('Their event_id, in the order sent.')),
  }),
});
