//! Who a gateway session talks to (`record_gateway_session_peer`).

/// Who a gateway session talks to, for
/// `record_gateway_session_peer`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GatewayPeer {
    /// The platform (`telegram`, `discord`, …); always written.
    pub source: String,
    /// The gateway routing key; an empty key makes the call a no-op.
    pub session_key: String,
    /// Platform user id; `None` clears the stored value.
    pub user_id: Option<String>,
    /// Chat or room; `None` clears the stored value.
    pub chat_id: Option<String>,
    /// e.g. `dm`, `group`; `None` clears the stored value.
    pub chat_type: Option<String>,
    /// Thread; `None` clears the stored value.
    pub thread_id: Option<String>,
    /// Presentation name; written only when `Some`.
    pub display_name: Option<String>,
    /// Origin JSON object text, stored as given; written only when `Some`.
    pub origin_json: Option<String>,
}
