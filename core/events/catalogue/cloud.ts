import * as v from 'valibot';
import { defineEvent } from '../define.ts';
import { identifier, int32, text, timestamp } from '../formats.ts';
import * as s from '../samples.ts';
import {
  awsInlinePolicy,
  awsManagedPolicy,
  awsPermissionsBoundary,
  awsTag,
  gcpIamPolicyBinding,
} from '../shared-types.ts';
import type { SampleContext } from '../types.ts';
import { EventSource } from '../types.ts';

// "Cloud-provider events": changes the service makes in a customer's AWS, GCP or Active Directory on the
// customer's behalf, so they come from Cloud. Webhooks may not subscribe to them (the spec's accepted
// trigger names leave them out), hence `triggerable: false`.

const cloud = { source: EventSource.Cloud, triggerable: false } as const;

const accountId = () => String(s.between(100_000_000_000, 999_999_999_999));
const roleName = () => s.pick(['ci-deployer', 'analytics-reader', 'backup-operator']);
const assumeRolePolicy = JSON.stringify({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' }],
});
const inlinePolicies = () => [
  {
    policy_name: 'read-reports',
    policy_document: JSON.stringify({
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: 'arn:aws:s3:::reports-bucket/*' }],
    }),
  },
];
const managedPolicies = () => [
  { policy_name: 'ReadOnlyAccess', policy_arn: 'arn:aws:iam::aws:policy/ReadOnlyAccess' },
];
const boundary = (account: string) => ({
  permissions_boundary_arn: `arn:aws:iam::${account}:policy/developer-boundary`,
  permissions_boundary_type: 'Policy',
});
const awsRole = () => ({ account_id: accountId(), role_name: roleName() });

export const awsIamRoleCreated = defineEvent({
  type: 'AWSIAMRoleCreated',
  typeNumber: 1001,
  ...cloud,
  members: {
    account_id: identifier(),
    role_name: identifier(),
    role_arn: identifier(),
    role_path: identifier(),
    role_id: identifier(),
    description: text(),
    inline_policies: v.array(awsInlinePolicy),
    attached_managed_policies: v.array(awsManagedPolicy),
    assume_role_policy_doc: text(),
    permissions_boundary: awsPermissionsBoundary,
    max_session_duration: int32(),
    tags: v.array(awsTag),
    created_at: timestamp(),
    last_used_at: timestamp(),
    last_used_region: identifier(),
  },
  sample: (ctx) => {
    const { account_id, role_name } = awsRole();
    return {
      account_id,
      role_name,
      role_arn: `arn:aws:iam::${account_id}:role/service/${role_name}`,
      role_path: '/service/',
      role_id: `AROA${s.randomHex(17).toUpperCase()}`,
      description: 'Created by the identity service for the deployment pipeline',
      inline_policies: inlinePolicies(),
      attached_managed_policies: managedPolicies(),
      assume_role_policy_doc: assumeRolePolicy,
      permissions_boundary: boundary(account_id),
      max_session_duration: 3600,
      tags: [{ key: 'managed-by', value: 'identity-service' }],
      created_at: s.iso(ctx.now),
      last_used_at: s.iso(ctx.now),
      last_used_region: s.pick(['us-east-1', 'eu-west-1']),
    };
  },
});

const awsUpdate = <E extends v.ObjectEntries, const T extends string>(
  type: T,
  typeNumber: number,
  members: E,
  sample: (ctx: SampleContext) => v.InferInput<v.StrictObjectSchema<E, undefined>>,
) => defineEvent({ type, typeNumber, ...cloud, members, sample });

const onRole = { account_id: identifier(), role_name: identifier() };

export const awsEvents = [
  awsIamRoleCreated,
  awsUpdate(
    'AWSIAMRoleInlinePoliciesUpdated',
    1002,
    { ...onRole, inline_policies: v.array(awsInlinePolicy) },
    () => ({ ...awsRole(), inline_policies: inlinePolicies() }),
  ),
  awsUpdate(
    'AWSIAMRoleManagedPoliciesUpdated',
    1003,
    { ...onRole, attached_managed_policies: v.array(awsManagedPolicy) },
    () => ({ ...awsRole(), attached_managed_policies: managedPolicies() }),
  ),
  awsUpdate('AWSIAMRoleAssumeRolePolicyUpdated', 1004, { ...onRole, assume_role_policy_doc: text() }, () => ({
    ...awsRole(),
    assume_role_policy_doc: assumeRolePolicy,
  })),
  awsUpdate(
    'AWSIAMRolePermissionsBoundaryUpdated',
    1005,
    { ...onRole, permissions_boundary: awsPermissionsBoundary },
    () => {
      const role = awsRole();
      return { ...role, permissions_boundary: boundary(role.account_id) };
    },
  ),
  awsUpdate('AWSIAMRoleDeleted', 1006, onRole, awsRole),
];

const project = () => s.pick(['acme-prod-4821', 'acme-analytics-1177']);

export const gcpEvents = [
  defineEvent({
    type: 'GCPServiceAccountCreated',
    typeNumber: 2001,
    ...cloud,
    members: {
      project_id: identifier(),
      name: identifier(),
      email: identifier(),
      unique_id: identifier(),
      display_name: text(),
      description: text(),
      oauth2_client_id: identifier(),
      disabled: v.boolean(),
      etag: identifier(),
    },
    sample: () => {
      const project_id = project();
      const uniqueId =
        String(s.between(100_000_000_000, 999_999_999_999)) + String(s.between(100_000_000, 999_999_999));
      const email = `report-exporter@${project_id}.iam.gserviceaccount.com`;
      return {
        project_id,
        name: `projects/${project_id}/serviceAccounts/${email}`,
        email,
        unique_id: uniqueId,
        display_name: 'Report exporter',
        description: 'Exports reports to the data warehouse',
        oauth2_client_id: uniqueId,
        disabled: false,
        etag: btoa(s.randomHex(8)),
      };
    },
  }),
  defineEvent({
    type: 'GCPIAMPolicyBindingUpdated',
    typeNumber: 2002,
    ...cloud,
    members: { project_id: identifier(), principal: identifier(), bindings: v.array(gcpIamPolicyBinding) },
    sample: () => {
      const project_id = project();
      return {
        project_id,
        principal: `serviceAccount:report-exporter@${project_id}.iam.gserviceaccount.com`,
        bindings: [
          {
            role: 'roles/bigquery.dataViewer',
            condition: {
              expression: 'request.time < timestamp("2027-01-01T00:00:00Z")',
              title: 'until-2027',
              description: 'Access expires at the start of 2027',
              location: 'policy.yaml',
            },
          },
        ],
      };
    },
  }),
  defineEvent({
    type: 'GCPServiceAccountDeleted',
    typeNumber: 2003,
    ...cloud,
    members: { project_id: identifier(), service_account_email: identifier() },
    sample: () => {
      const project_id = project();
      return { project_id, service_account_email: `report-exporter@${project_id}.iam.gserviceaccount.com` };
    },
  }),
];

const spn = {
  domain: identifier(),
  service_class: identifier(),
  service_name: identifier(),
  account_name: identifier(),
  account_type: identifier(),
  distinguished_name: identifier(),
};
const spnSample = () => {
  const host = s.pick(['web01', 'sql02', 'files03']);
  return {
    domain: 'corp.example.com',
    service_class: host.startsWith('sql') ? 'MSSQLSvc' : 'HTTP',
    service_name: `${host}.corp.example.com`,
    account_name: `svc-${host}`,
    account_type: 'user',
    distinguished_name: `CN=svc-${host},OU=Service Accounts,DC=corp,DC=example,DC=com`,
  };
};

export const activeDirectoryEvents = [
  defineEvent({
    type: 'ActiveDirectorySPNCreated',
    typeNumber: 3001,
    ...cloud,
    members: spn,
    sample: spnSample,
  }),
  defineEvent({
    type: 'ActiveDirectorySPNRoleUpdated',
    typeNumber: 3002,
    ...cloud,
    members: spn,
    sample: spnSample,
  }),
  defineEvent({
    type: 'ActiveDirectorySPNDeleted',
    typeNumber: 3003,
    ...cloud,
    members: spn,
    sample: spnSample,
  }),
];

/** Every cloud-provider event. */
export const cloudProviderEvents = [...awsEvents, ...gcpEvents, ...activeDirectoryEvents];
