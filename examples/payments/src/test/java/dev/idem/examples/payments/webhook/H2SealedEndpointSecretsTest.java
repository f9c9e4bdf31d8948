package dev.idem.examples.payments.webhook;

import dev.idem.examples.payments.DatabaseOfItsOwn;

class H2SealedEndpointSecretsTest extends SealedEndpointSecretsContract {
  @Override
  DatabaseOfItsOwn database() {
    return null;
  }
}
