/** Implementation details of idem-client; not an API, excluded from Javadoc. */
package dev.idem.client.internal;
