package dev.idem.examples.payments.webhook;

import dev.idem.examples.payments.DatabaseOfItsOwn;

class MariaDbSealedEndpointSecretsTest extends SealedEndpointSecretsContract {
  @Override
  DatabaseOfItsOwn database() {
    return DatabaseOfItsOwn.mariadbCaseInsensitive();
  }
}
