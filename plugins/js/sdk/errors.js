// Connector errors for JavaScript connectors: what the host shows to the user (WIT
// `connector-error`), thrown from an export's function.

/**
 * A connector error: `tag` is `not-found`, `unavailable`, `invalid-config` or `other`, and
 * `message` says what happened and what to change.
 */
export function connectorError(tag, message) {
  return { tag, val: message };
}
