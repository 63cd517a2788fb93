// Every DynamoDB key of the single table is built here, so access patterns cannot disagree on a format.

export interface Key {
  readonly pk: string;
  readonly sk: string;
}

/** The resources with a change feed (gsi3). */
export type ChangedResource = 'deployments' | 'pending_deployments' | 'targets';

/**
 * The fixed partitions of the list indexes (gsi1/gsi2): the `*Index` keys below write them, the list queries read
 * them.
 */
export const partitions = {
  users: 'USERS',
  roles: 'ROLES',
  actions: 'ACTIONS',
  sequences: 'SEQUENCES',
  solutions: 'SOLUTIONS',
  tenants: 'TENANTS',
  environments: 'ENVIRONMENTS',
  freezes: 'FREEZES',
  targets: 'TARGETS',
  enrollmentTokens: 'ENROLLTOKENS',
  pendingQueue: 'PENDINGQUEUE',
  pendingRequests: 'PENDINGREQUESTS',
  analysisRequests: 'ANALYSISREQUESTS',
  deployments: 'DEPLOYMENTS',
  oauthClients: 'OAUTHCLIENTS',
  identityProviders: 'IDPS',
  viewerExpiry: 'VIEWEREXPIRY',
} as const;

/** The sort-key prefixes a query reads with begins_with: each is the start of a sort key `keys` builds below. */
export const prefixes = {
  actionVersion: 'VERSION#',
  commandOutput: 'OUTPUT#',
  inboxRun: 'RUN#',
  inboxCancel: 'CANCEL#',
  inboxPushed: 'PUSHED#',
  roleMapping: 'MAPPING#',
  orchestrationInstance: 'INSTANCE#',
  deploymentEvent: 'EVENT#',
  parkedEvents: 'PARKED#',
  viewerTopicRef: 'TOPIC#',
} as const;

export const keys = {
  /** The per-entity counter behind short ids. */
  counter: (entity: string): Key => ({ pk: `COUNTER#${entity}`, sk: 'COUNTER' }),
  /** A key no record ever has; reading it is the cheapest way to prove the table answers. */
  probe: (): Key => ({ pk: 'HEALTH#PROBE', sk: 'HEALTH#PROBE' }),
  user: (id: string): Key => ({ pk: `USER#${id}`, sk: 'PROFILE' }),
  /** Uniqueness claims: one item per lower-cased email and username, written with the user in one transaction. */
  userEmail: (email: string): Key => ({ pk: `USEREMAIL#${email.toLowerCase()}`, sk: 'CLAIM' }),
  userName: (username: string): Key => ({ pk: `USERNAME#${username.toLowerCase()}`, sk: 'CLAIM' }),
  /** Every user, newest last, on gsi1. */
  usersIndex: (createdAt: string, id: string) => ({ gsi1pk: partitions.users, gsi1sk: `${createdAt}#${id}` }),
  shortId: (entity: string, shortId: string): Key => ({ pk: `SHORTID#${entity}#${shortId}`, sk: 'ALIAS' }),
  refreshToken: (tokenHash: string): Key => ({ pk: `REFRESH#${tokenHash}`, sk: 'REFRESH' }),
  refreshFamily: (familyId: string): Key => ({ pk: `REFRESHFAMILY#${familyId}`, sk: 'FAMILY' }),
  signingKey: (kid: string): Key => ({ pk: `SIGNINGKEY#${kid}`, sk: 'KEY' }),
  currentSigningKey: (): Key => ({ pk: 'SIGNINGKEY#CURRENT', sk: 'POINTER' }),
  /** Every signing key, on gsi1 (the JWKS). */
  signingKeysIndex: (createdAt: string, kid: string) => ({ gsi1pk: 'SIGNINGKEYS', gsi1sk: `${createdAt}#${kid}` }),
  /** An API key by the hash of its full value (the authentication lookup). */
  apiKeyByHash: (keyHash: string): Key => ({ pk: `APIKEYHASH#${keyHash}`, sk: 'KEY' }),
  /** A user's API keys on gsi1, and one key by id on gsi2. */
  apiKeysOfUser: (userId: string, createdAt: string, id: string) => ({
    gsi1pk: `USERAPIKEYS#${userId}`,
    gsi1sk: `${createdAt}#${id}`,
  }),
  apiKeyById: (id: string) => ({ gsi2pk: `APIKEY#${id}`, gsi2sk: 'KEY' }),
  sseToken: (tokenHash: string): Key => ({ pk: `SSETOKEN#${tokenHash}`, sk: 'TOKEN' }),
  sseSession: (sessionId: string): Key => ({ pk: `SSESESSION#${sessionId}`, sk: 'SESSION' }),
  role: (id: string): Key => ({ pk: `ROLE#${id}`, sk: 'ROLE' }),
  roleName: (name: string): Key => ({ pk: `ROLENAME#${name.toLowerCase()}`, sk: 'CLAIM' }),
  /** Every custom role on gsi1. */
  rolesIndex: (name: string) => ({ gsi1pk: partitions.roles, gsi1sk: name.toLowerCase() }),
  /**
   * The partition of one caller's Idempotency-Key records (Powertools' idempotency persistence layer writes them: its
   * static pk value; the sort key is its hashed key `IDEMPOTENCY#<md5 of caller and key>`).
   */
  idempotencyPartition: (userId: string): string => `IDEMPOTENCY#${userId}`,
  /** The state of one general rate-limit key (a client address). */
  rateLimit: (key: string): Key => ({ pk: `RATE#${key}`, sk: 'RATE' }),
  /** The open-stream slots of one user (STREAMS_PER_USER of them), each holding at most one lease. */
  streamSlots: (userId: string) => `STREAMSLOTS#${userId}`,
  streamSlot: (userId: string, slot: number): Key => ({
    pk: `STREAMSLOTS#${userId}`,
    sk: `SLOT#${String(slot).padStart(4, '0')}`,
  }),
  /** Failed-login counting and lockout of one client address. */
  loginThrottle: (ip: string): Key => ({ pk: `LOGINTHROTTLE#${ip}`, sk: 'LOGINTHROTTLE' }),
  /** Wrong two-factor codes of one user and the lockout (the login throttle's item shape). */
  twoFactorThrottle: (userId: string): Key => ({ pk: `TWOFACTORTHROTTLE#${userId}`, sk: 'LOGINTHROTTLE' }),
  /** Code attempts and single use of one pending two-factor token (by the token's hash). */
  twoFactorPending: (tokenHash: string): Key => ({ pk: `TWOFACTORPENDING#${tokenHash}`, sk: 'ATTEMPTS' }),
  // ---- the viewer channel (domain/streams/viewer-ports.ts): connections and what each watches ----
  /** A viewer's connection; its subscriptions' back-references share the partition (sk TOPIC#<topic key>). */
  viewerConnection: (connectionId: string): Key => ({ pk: `VIEWER#${connectionId}`, sk: 'CONNECTION' }),
  viewerTopicRef: (connectionId: string, topicKey: string): Key => ({
    pk: `VIEWER#${connectionId}`,
    sk: `${prefixes.viewerTopicRef}${topicKey}`,
  }),
  /** One user's open viewer connections (a copy of each): the per-user limit and the closing read one partition. */
  viewersOfUser: (userId: string): string => `VIEWERUSER#${userId}`,
  viewerOfUser: (userId: string, connectionId: string): Key => ({
    pk: `VIEWERUSER#${userId}`,
    sk: `CONN#${connectionId}`,
  }),
  /** The subscribers of one topic (a copy of each connection, so the push reads one partition). */
  viewerSubscribers: (topicKey: string): string => `VIEWERTOPIC#${topicKey}`,
  viewerSubscription: (topicKey: string, connectionId: string): Key => ({
    pk: `VIEWERTOPIC#${topicKey}`,
    sk: `CONN#${connectionId}`,
  }),
  /** Every viewer connection by when it expires, on gsi2 (the sweep closes those past it). */
  viewerExpiry: (expiresAt: string, connectionId: string) => ({
    gsi2pk: partitions.viewerExpiry,
    gsi2sk: `${expiresAt}#${connectionId}`,
  }),
  // ---- catalog (domain/catalog): actions, versions, sequences, solutions ----
  /** The action item; its versions share the partition (sk VERSION#<version>), so one query reads both. */
  action: (id: string): Key => ({ pk: `ACTION#${id}`, sk: 'ACTION' }),
  actionVersion: (actionId: string, version: string): Key => ({
    pk: `ACTION#${actionId}`,
    sk: `${prefixes.actionVersion}${version}`,
  }),
  /** Slug uniqueness within a scope: a tenant id, or GLOBAL. */
  actionSlug: (tenantId: string | null, slug: string): Key => ({
    pk: `ACTIONSLUG#${tenantId ?? 'GLOBAL'}#${slug.toLowerCase()}`,
    sk: 'CLAIM',
  }),
  actionsIndex: (createdAt: string, id: string) => ({ gsi1pk: partitions.actions, gsi1sk: `${createdAt}#${id}` }),
  sequence: (id: string): Key => ({ pk: `SEQUENCE#${id}`, sk: 'SEQUENCE' }),
  sequencesIndex: (createdAt: string, id: string) => ({ gsi1pk: partitions.sequences, gsi1sk: `${createdAt}#${id}` }),
  solution: (id: string): Key => ({ pk: `SOLUTION#${id}`, sk: 'SOLUTION' }),
  solutionsIndex: (createdAt: string, id: string) => ({ gsi1pk: partitions.solutions, gsi1sk: `${createdAt}#${id}` }),

  // ---- tenancy (domain/tenancy): tenants, environments, deployment freezes ----
  tenant: (id: string): Key => ({ pk: `TENANT#${id}`, sk: 'TENANT' }),
  tenantSlug: (slug: string): Key => ({ pk: `TENANTSLUG#${slug.toLowerCase()}`, sk: 'CLAIM' }),
  tenantsIndex: (createdAt: string, id: string) => ({ gsi1pk: partitions.tenants, gsi1sk: `${createdAt}#${id}` }),
  environment: (id: string): Key => ({ pk: `ENVIRONMENT#${id}`, sk: 'ENVIRONMENT' }),
  /** Environment names are unique within their tenant (or among global environments). */
  environmentName: (tenantId: string | null, name: string): Key => ({
    pk: `ENVNAME#${tenantId ?? 'GLOBAL'}#${name.toLowerCase()}`,
    sk: 'CLAIM',
  }),
  environmentsIndex: (createdAt: string, id: string) => ({
    gsi1pk: partitions.environments,
    gsi1sk: `${createdAt}#${id}`,
  }),
  freeze: (id: string): Key => ({ pk: `FREEZE#${id}`, sk: 'FREEZE' }),
  freezesIndex: (createdAt: string, id: string) => ({ gsi1pk: partitions.freezes, gsi1sk: `${createdAt}#${id}` }),

  // ---- targets and agents (domain/targets) ----
  target: (id: string): Key => ({ pk: `TARGET#${id}`, sk: 'TARGET' }),
  targetsIndex: (createdAt: string, id: string) => ({ gsi1pk: partitions.targets, gsi1sk: `${createdAt}#${id}` }),
  enrollmentToken: (tokenHash: string): Key => ({ pk: `ENROLLTOKEN#${tokenHash}`, sk: 'TOKEN' }),
  /** Every enrollment token on gsi1 (the list), and one by id on gsi2 (revocation). */
  enrollmentTokensIndex: (createdAt: string, id: string) => ({
    gsi1pk: partitions.enrollmentTokens,
    gsi1sk: `${createdAt}#${id}`,
  }),
  enrollmentTokenById: (id: string) => ({ gsi2pk: `ENROLLTOKENID#${id}`, gsi2sk: 'TOKEN' }),
  agentToken: (tokenHash: string): Key => ({ pk: `AGENTTOKEN#${tokenHash}`, sk: 'TOKEN' }),
  /** A command for an agent; its output chunks share the partition (sk OUTPUT#<seq>). */
  command: (id: string): Key => ({ pk: `COMMAND#${id}`, sk: 'COMMAND' }),
  commandOutput: (id: string, seq: number): Key => ({
    pk: `COMMAND#${id}`,
    sk: `${prefixes.commandOutput}${String(seq).padStart(10, '0')}`,
  }),
  /**
   * A target's inbox on gsi1 (sparse: only while there is something to tell the agent): commands to run
   * (RUN#...) and running commands to stop (CANCEL#...). Claiming an entry removes these attributes.
   */
  agentInbox: (targetId: string, kind: 'RUN' | 'CANCEL' | 'PUSHED', createdAt: string, commandId: string) => ({
    gsi1pk: `AGENTINBOX#${targetId}`,
    gsi1sk: `${kind}#${createdAt}#${commandId}`,
  }),
  /** An agent's WebSocket connection -> its target (the disconnect and the agent's messages carry only the id). */
  agentConnection: (connectionId: string): Key => ({ pk: `AGENTCONNECTION#${connectionId}`, sk: 'CONNECTION' }),
  // ---- failure analysis (domain/analysis) ----
  analysisRequest: (id: string): Key => ({ pk: `ANALYSIS#${id}`, sk: 'REQUEST' }),
  /** Every analysis request on gsi1, oldest first (the admin list reads it newest first). */
  analysisRequestsIndex: (createdAt: string, id: string) => ({
    gsi1pk: partitions.analysisRequests,
    gsi1sk: `${createdAt}#${id}`,
  }),
  /** The analysis settings' stored overrides. */
  analysisSettings: (): Key => ({ pk: 'ANALYSIS', sk: 'SETTINGS' }),
  // ---- deployments (domain/deployments) ----
  deployment: (id: string): Key => ({ pk: `DEPLOYMENT#${id}`, sk: 'DEPLOYMENT' }),
  deploymentsIndex: (createdAt: string, id: string) => ({
    gsi1pk: partitions.deployments,
    gsi1sk: `${createdAt}#${id}`,
  }),
  /**
   * Every deployment on gsi5 (sparse: only deployments), which projects only what the list filters, counts and
   * orders by: the list reads these slim entries, never the plans (infra/dynamodb/deployment-list-index.ts).
   */
  deploymentsList: (createdAt: string, id: string) => ({
    gsi5pk: partitions.deployments,
    gsi5sk: `${createdAt}#${id}`,
  }),
  /** A one-time data migration's progress (when it started, when it finished). */
  migration: (name: string): Key => ({ pk: 'MIGRATION', sk: name }),
  /** The orchestration settings (capacity) and its instances share one small partition: one query reads all. */
  orchestrationConfig: (): Key => ({ pk: 'ORCHESTRATION', sk: 'CONFIG' }),
  orchestrationInstance: (instanceId: string): Key => ({
    pk: 'ORCHESTRATION',
    sk: `${prefixes.orchestrationInstance}${instanceId}`,
  }),
  pendingRequest: (id: string): Key => ({ pk: `PENDING#${id}`, sk: 'PENDING' }),
  /** A keyed create's claim on its Idempotency-Key (by the hash of user, credential and key), naming what it made. */
  createClaim: (scope: string): Key => ({ pk: `CREATECLAIM#${scope}`, sk: 'CLAIM' }),
  /** Requests being dispatched on gsi1 (sparse: only while processing), oldest claim first: the sweep's recovery. */
  pendingProcessing: (processingSince: string, id: string) => ({
    gsi1pk: 'PENDINGPROCESSING',
    gsi1sk: `${processingSince}#${id}`,
  }),
  /**
   * The outbox: side effects a terminal transaction still owes (cancel notices, the dispatcher's wake-up, the final
   * event). One small partition, oldest first; an entry lives from the terminal write until its effects are done.
   */
  outboxEntry: (at: string, deploymentId: string): Key => ({ pk: 'OUTBOX', sk: `${at}#${deploymentId}` }),
  /** Pending requests in dispatch order on gsi1 (sparse: only while pending): highest priority, then oldest. */
  pendingQueue: (priority: number, queuedAt: string, id: string) => ({
    gsi1pk: partitions.pendingQueue,
    gsi1sk: `${String(100 - priority).padStart(3, '0')}#${queuedAt}#${id}`,
  }),
  /**
   * The change feed (gsi3): every write of a deployment, pending request or target moves its entry to the write's
   * time, so a resource stream reads only what changed since it last looked. Deleted targets leave a tombstone.
   */
  changed: (resource: ChangedResource, at: string, id: string) => ({
    gsi3pk: `CHANGES#${resource}`,
    gsi3sk: `${at}#${id}`,
  }),
  targetTombstone: (id: string): Key => ({ pk: `TARGETGONE#${id}`, sk: 'GONE' }),
  /** Every pending request, any status, on gsi2. */
  pendingRequestsIndex: (createdAt: string, id: string) => ({
    gsi2pk: partitions.pendingRequests,
    gsi2sk: `${createdAt}#${id}`,
  }),
  /** The commands of one deployment on gsi2 (to stop them all on cancel). */
  deploymentCommands: (deploymentId: string, createdAt: string, commandId: string) => ({
    gsi2pk: `DEPLOYMENTCOMMANDS#${deploymentId}`,
    gsi2sk: `${createdAt}#${commandId}`,
  }),
  // ---- OAuth 2.0 clients (domain/oauth) ----
  oauthClient: (id: string): Key => ({ pk: `OAUTHCLIENT#${id}`, sk: 'CLIENT' }),
  /** The token endpoint's lookup: client_id -> id (written with the client, unique). */
  oauthClientId: (clientId: string): Key => ({ pk: `OAUTHCLIENTID#${clientId}`, sk: 'CLAIM' }),
  /** A revoked OAuth access token (by its jti), kept until the token would have expired (TTL). */
  oauthRevoked: (tokenId: string): Key => ({ pk: `OAUTHREVOKED#${tokenId}`, sk: 'REVOKED' }),
  /** A revoked grant (an authorization and every token it produced), kept until its last token would expire. */
  oauthGrantRevoked: (grantId: string): Key => ({ pk: `OAUTHGRANTREVOKED#${grantId}`, sk: 'REVOKED' }),
  /** An authorization code by the hash of its value (TTL: a few minutes past its expiry, for reuse detection). */
  oauthCode: (codeHash: string): Key => ({ pk: `OAUTHCODE#${codeHash}`, sk: 'CODE' }),
  /** An OAuth refresh token by the hash of its value. */
  oauthRefresh: (tokenHash: string): Key => ({ pk: `OAUTHREFRESH#${tokenHash}`, sk: 'REFRESH' }),
  /** Every client, oldest first, on gsi1 (an admin list; clients are few). */
  oauthClientsIndex: (createdAt: string, id: string) => ({
    gsi1pk: partitions.oauthClients,
    gsi1sk: `${createdAt}#${id}`,
  }),

  // ---- deploy triggers (domain/triggers) ----
  trigger: (id: string): Key => ({ pk: `TRIGGER#${id}`, sk: 'TRIGGER' }),
  /** One owner's triggers on gsi1, oldest first. */
  triggersIndex: (ownerId: string, createdAt: string, id: string) => ({
    gsi1pk: `TRIGGERS#${ownerId}`,
    gsi1sk: `${createdAt}#${id}`,
  }),
  /** A delivery id a trigger received (replay protection, TTL). */
  triggerDelivery: (triggerId: string, deliveryId: string): Key => ({
    pk: `TRIGGERDELIVERY#${triggerId}#${deliveryId}`,
    sk: 'DELIVERY',
  }),

  // ---- outgoing webhooks (domain/webhooks) ----
  webhook: (id: string): Key => ({ pk: `WEBHOOK#${id}`, sk: 'WEBHOOK' }),
  /** A tenant's subscriptions (GLOBAL: the global ones) on gsi1, oldest first: what an emitter reads. */
  webhooksPartition: (tenantId: string | null): string => `WEBHOOKS#${tenantId ?? 'GLOBAL'}`,
  webhooksIndex: (tenantId: string | null, createdAt: string, id: string) => ({
    gsi1pk: `WEBHOOKS#${tenantId ?? 'GLOBAL'}`,
    gsi1sk: `${createdAt}#${id}`,
  }),
  webhookDelivery: (deliveryId: string): Key => ({ pk: `WEBHOOKDELIVERY#${deliveryId}`, sk: 'DELIVERY' }),
  /** A subscription's deliveries on gsi1, by creation time. */
  webhookDeliveriesPartition: (subscriptionId: string): string => `WEBHOOKDELIVERIES#${subscriptionId}`,
  webhookDeliveriesIndex: (subscriptionId: string, createdAt: string, deliveryId: string) => ({
    gsi1pk: `WEBHOOKDELIVERIES#${subscriptionId}`,
    gsi1sk: `${createdAt}#${deliveryId}`,
  }),

  // ---- single sign-on (domain/sso): identity providers, their role mappings, sign-ins in flight, links ----
  /** The provider item; its role mappings share the partition (sk MAPPING#<id>), so one query reads them all. */
  identityProvider: (id: string): Key => ({ pk: `IDP#${id}`, sk: 'PROVIDER' }),
  roleMapping: (providerId: string, mappingId: string): Key => ({
    pk: `IDP#${providerId}`,
    sk: `${prefixes.roleMapping}${mappingId}`,
  }),
  /** Name and issuer are unique within a scope: a tenant id, or GLOBAL. */
  identityProviderName: (tenantId: string | null, name: string): Key => ({
    pk: `IDPNAME#${tenantId ?? 'GLOBAL'}#${name.toLowerCase()}`,
    sk: 'CLAIM',
  }),
  identityProviderIssuer: (tenantId: string | null, issuer: string): Key => ({
    pk: `IDPISSUER#${tenantId ?? 'GLOBAL'}#${issuer}`,
    sk: 'CLAIM',
  }),
  /** Every provider, oldest first, on gsi1 (an admin list; providers are few). */
  identityProvidersIndex: (createdAt: string, id: string) => ({
    gsi1pk: partitions.identityProviders,
    gsi1sk: `${createdAt}#${id}`,
  }),
  /** One sign-in in flight, by the hash of its `state` (TTL; deleted when its callback consumes it). */
  ssoState: (stateHash: string): Key => ({ pk: `SSOSTATE#${stateHash}`, sk: 'STATE' }),
  /** The user linked to a provider's subject (written with the link, unique). */
  ssoLink: (providerId: string, subject: string): Key => ({ pk: `SSOLINK#${providerId}#${subject}`, sk: 'CLAIM' }),
  // ---- deployment events (domain/deployments/events.ts): one partition per deployment ----
  /** The head of a deployment's event sequence (attribute `seq`: the last seq written). */
  deploymentEventsHead: (deploymentId: string): Key => ({ pk: `DEPLOYMENTEVENTS#${deploymentId}`, sk: 'HEAD' }),
  /** One event; the zero-padded seq makes the sort key order the sequence order. */
  deploymentEvent: (deploymentId: string, seq: number): Key => ({
    pk: `DEPLOYMENTEVENTS#${deploymentId}`,
    sk: `${prefixes.deploymentEvent}${String(seq).padStart(10, '0')}`,
  }),
  /**
   * A keyed group of events parked after it lost the race for the head (TTL), until a merge appends it: ordered by
   * the time it was parked, then a per-process counter.
   */
  parkedEvents: (deploymentId: string, parkedAt: number, counter: number, groupKey: string): Key => ({
    pk: `DEPLOYMENTEVENTS#${deploymentId}`,
    sk: `${prefixes.parkedEvents}${String(parkedAt).padStart(13, '0')}#${String(counter).padStart(6, '0')}#${groupKey}`,
  }),
  /** Marks that the events of one keyed group (a part of a command's output chunk) were appended: written with them. */
  deploymentEventsMarker: (deploymentId: string, groupKey: string): Key => ({
    pk: `DEPLOYMENTEVENTS#${deploymentId}`,
    sk: `MARK#${groupKey}`,
  }),
  // ---- encryption at rest (domain/encryption) ----
  /**
   * The encryption index (gsi4, sparse: only items that hold ciphertexts): partition `ENC#<key id>` (the key ids of
   * the item's ciphertexts, sorted and joined with `+` in the rare item that holds several), sort key
   * `<record type>#<pk>#<sk>`. Stats, verification and rotation read it instead of the table.
   */
  encrypted: (keyIds: readonly string[], recordType: string, key: Key) => ({
    gsi4pk: `ENC#${keyIds.join('+')}`,
    gsi4sk: `${recordType}#${key.pk}#${key.sk}`,
  }),
  /** One caller's key verification slot (one attempt per hour). */
  encryptionVerifySlot: (callerId: string): Key => ({ pk: `ENCVERIFY#${callerId}`, sk: 'SLOT' }),
} as const;
