/** The starter's machinery: annotation scanning, the Spring transaction join, background work, meters. */
package dev.idem.spring.internal;
