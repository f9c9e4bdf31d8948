/**
 * The starter's machinery: annotation scanning, the Spring transaction join, background work, meters and the
 * threads their gauges read on.
 */
package dev.idem.spring.internal;
