import { afterEach, describe, expect, it } from 'bun:test';
import { eq } from 'drizzle-orm';
import { emailChallenges } from '../../../plugins/email-codes/schema.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type EmailTestService, emailService } from './fixture.ts';

let svc: EmailTestService | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
});

describe("a person's email addresses among their credentials", () => {
  it('lists each address as an otp_via_email credential the last-factor rule counts, and never deletes it', async () => {
    svc = await emailService();
    const personId = await svc.addPerson('ada@example.com');
    const listed = await svc.call('GET', `/persons/${personId}/credentials`);
    await expectStatus(listed, 200);
    expect(listed.json.result).toEqual([
      {
        credential_id: expect.stringMatching(
          /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
        ),
        type: 'otp_via_email',
        name: 'ada@example.com',
        created_at: expect.any(String),
      },
    ]);
    const id = listed.json.result[0].credential_id;
    const again = await svc.call('GET', `/persons/${personId}/credentials`);
    expect(again.json.result[0].credential_id).toBe(id);

    // The person's only way in under the default policy: the factors plugin keeps it.
    await expectStatus(await svc.call('DELETE', `/persons/${personId}/credentials/${id}`), 409);
    // Forced, this plugin still refuses: an address is a handle, removed through the persons API.
    const forced = await svc.call('DELETE', `/persons/${personId}/credentials/${id}?force=true`);
    await expectStatus(forced, 409);
    expect(forced.json.errors[0].message).toContain('a handle');
  });

  it("deletes a deleted person's challenges with them", async () => {
    svc = await emailService();
    const personId = await svc.addPerson('ada@example.com');
    await expectStatus(await svc.start('ada@example.com', 'otp_via_email'), 202);
    await svc.mail(1);
    const rows = () =>
      svc!.service.ctx.storage.db
        .select()
        .from(emailChallenges)
        .where(eq(emailChallenges.personId, personId));
    expect(await rows()).toHaveLength(1);
    await expectStatus(await svc.call('DELETE', `/persons/${personId}`), 204);
    expect(await rows()).toHaveLength(0);
  });
});
