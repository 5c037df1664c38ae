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

describe("a person's email sign-in data", () => {
  it('lists no credential for an email address: it is a handle of the person', async () => {
    svc = await emailService();
    const personId = await svc.addPerson('ada@example.com');
    const listed = await svc.call('GET', `/persons/${personId}/credentials`);
    await expectStatus(listed, 200);
    expect(listed.json.result).toEqual([]);
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
