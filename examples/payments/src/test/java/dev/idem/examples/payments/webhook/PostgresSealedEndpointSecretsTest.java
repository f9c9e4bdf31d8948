package dev.idem.examples.payments.webhook;

import dev.idem.examples.payments.DatabaseOfItsOwn;

class PostgresSealedEndpointSecretsTest extends SealedEndpointSecretsContract {
  @Override
  DatabaseOfItsOwn database() {
    return DatabaseOfItsOwn.postgres();
  }
}
