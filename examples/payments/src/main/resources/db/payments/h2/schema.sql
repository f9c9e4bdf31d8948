-- Tables of the payments example, H2. Times are Unix epoch milliseconds (UTC).
CREATE TABLE IF NOT EXISTS pay_payment (
  id                 VARCHAR(40)  NOT NULL PRIMARY KEY,
  tenant             VARCHAR(255) NOT NULL,
  account_id         VARCHAR(64)  NOT NULL,
  amount             BIGINT       NOT NULL,
  currency           CHAR(3)      NOT NULL,
  description        VARCHAR(500),
  status             VARCHAR(16)  NOT NULL,
  provider_charge_id VARCHAR(64),
  refunded_amount    BIGINT       NOT NULL DEFAULT 0,
  created_at         BIGINT       NOT NULL,
  updated_at         BIGINT       NOT NULL,
  CONSTRAINT pay_payment_amount CHECK (amount > 0),
  CONSTRAINT pay_payment_refunds_bounded CHECK (refunded_amount >= 0 AND refunded_amount <= amount)
);
CREATE INDEX IF NOT EXISTS pay_payment_tenant ON pay_payment (tenant, created_at);

CREATE TABLE IF NOT EXISTS pay_refund (
  id                 VARCHAR(40)  NOT NULL PRIMARY KEY,
  tenant             VARCHAR(255) NOT NULL,
  payment_id         VARCHAR(40)  NOT NULL,
  amount             BIGINT       NOT NULL,
  currency           CHAR(3)      NOT NULL,
  status             VARCHAR(16)  NOT NULL,
  provider_refund_id VARCHAR(64),
  created_at         BIGINT       NOT NULL,
  updated_at         BIGINT       NOT NULL,
  CONSTRAINT pay_refund_amount CHECK (amount > 0),
  CONSTRAINT pay_refund_payment FOREIGN KEY (payment_id) REFERENCES pay_payment (id)
);
CREATE INDEX IF NOT EXISTS pay_refund_payment_id ON pay_refund (payment_id);

-- One pair per payment or refund: the unique (reference_id, direction) refuses a second booking.
CREATE TABLE IF NOT EXISTS pay_ledger_entry (
  id             VARCHAR(40)  NOT NULL PRIMARY KEY,
  tenant         VARCHAR(255) NOT NULL,
  account_id     VARCHAR(300) NOT NULL,
  direction      VARCHAR(6)   NOT NULL,
  amount         BIGINT       NOT NULL,
  currency       CHAR(3)      NOT NULL,
  reference_type VARCHAR(16)  NOT NULL,
  reference_id   VARCHAR(40)  NOT NULL,
  created_at     BIGINT       NOT NULL,
  CONSTRAINT pay_ledger_entry_once UNIQUE (reference_id, direction)
);
CREATE INDEX IF NOT EXISTS pay_ledger_entry_account ON pay_ledger_entry (tenant, account_id);

-- The simulated provider's own state.
CREATE TABLE IF NOT EXISTS pay_provider_charge (
  idempotency_key    VARCHAR(255) NOT NULL PRIMARY KEY,
  id                 VARCHAR(64)  NOT NULL,
  account_id         VARCHAR(255) NOT NULL,
  amount             BIGINT       NOT NULL,
  currency           CHAR(3)      NOT NULL,
  status             VARCHAR(16)  NOT NULL,
  duplicate_attempts BIGINT       NOT NULL DEFAULT 0,
  created_at         BIGINT       NOT NULL,
  CONSTRAINT pay_provider_charge_id UNIQUE (id)
);
CREATE INDEX IF NOT EXISTS pay_provider_charge_account ON pay_provider_charge (account_id);

CREATE TABLE IF NOT EXISTS pay_provider_refund (
  idempotency_key    VARCHAR(255) NOT NULL PRIMARY KEY,
  id                 VARCHAR(64)  NOT NULL,
  charge_id          VARCHAR(64)  NOT NULL,
  amount             BIGINT       NOT NULL,
  status             VARCHAR(16)  NOT NULL,
  duplicate_attempts BIGINT       NOT NULL DEFAULT 0,
  created_at         BIGINT       NOT NULL,
  CONSTRAINT pay_provider_refund_id UNIQUE (id)
);
CREATE INDEX IF NOT EXISTS pay_provider_refund_charge ON pay_provider_refund (charge_id);

-- Tenants' webhook endpoints: events is a comma-separated list of event types, or "*". The secret signs what the
-- service sends (Standard Webhooks, whsec_...); it is shown to the tenant once, when the endpoint is created.
-- An endpoint that answered 410 Gone is disabled, with the reason.
CREATE TABLE IF NOT EXISTS pay_webhook_endpoint (
  id              VARCHAR(40)   NOT NULL PRIMARY KEY,
  tenant          VARCHAR(255)  NOT NULL,
  url             VARCHAR(2048) NOT NULL,
  events          VARCHAR(500)  NOT NULL,
  secret          VARCHAR(200)  NOT NULL,
  enabled         BOOLEAN       NOT NULL,
  created_at      BIGINT        NOT NULL,
  disabled_reason VARCHAR(500)
);
CREATE INDEX IF NOT EXISTS pay_webhook_endpoint_tenant ON pay_webhook_endpoint (tenant, created_at);

-- The provider's confirmations, received as signed webhooks through the inbox: one row per provider object (a
-- charge or a refund). confirmations counts the webhooks whose effect was applied; the inbox makes it 1 however
-- often the provider re-sends one event.
CREATE TABLE IF NOT EXISTS pay_provider_confirmation (
  provider_object_id VARCHAR(64)  NOT NULL PRIMARY KEY,
  object_type        VARCHAR(16)  NOT NULL,
  event_type         VARCHAR(64)  NOT NULL,
  event_id           VARCHAR(64)  NOT NULL,
  amount             BIGINT       NOT NULL,
  confirmations      BIGINT       NOT NULL,
  confirmed_at       BIGINT       NOT NULL
);

-- Conditional requests. version is incremented by every write of a payment, and GET /payments/{id} answers it as
-- the strong ETag "v<version>"; PATCH /payments/{id} changes description and metadata (a JSON object of strings)
-- with If-Match, checking and bumping the version in one UPDATE.
ALTER TABLE pay_payment ADD COLUMN IF NOT EXISTS version BIGINT NOT NULL DEFAULT 1;
ALTER TABLE pay_payment ADD COLUMN IF NOT EXISTS metadata VARCHAR(16000);

-- Account profiles (PUT /accounts/{id}): ids are the tenant's own, so the key is (tenant, id). version as above.
CREATE TABLE IF NOT EXISTS pay_account (
  tenant     VARCHAR(255) NOT NULL,
  id         VARCHAR(64)  NOT NULL,
  name       VARCHAR(200) NOT NULL,
  email      VARCHAR(254) NOT NULL,
  metadata   VARCHAR(16000),
  version    BIGINT       NOT NULL,
  created_at BIGINT       NOT NULL,
  updated_at BIGINT       NOT NULL,
  PRIMARY KEY (tenant, id)
);
