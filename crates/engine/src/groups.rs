//! The key-exchange groups a format logs (`$ssl_curve`, `$ssl_curves`,
//! `SSL_CLIENTHELLO_GROUPS`), counted the same way by `tls` and `report`.

use tlsgap_agg::pq::{GroupsAgg, PqReport};
use tlsgap_agg::ClientKey;
use tlsgap_parser::{Format, Record, Role};

/// Where a format logs the groups, and what one client is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GroupColumns {
    negotiated: Option<usize>,
    offered: Option<usize>,
    client: Option<usize>,
    user_agent: Option<usize>,
    client_key: ClientKey,
}

impl GroupColumns {
    pub(crate) fn of(format: &Format, client_key: ClientKey) -> GroupColumns {
        GroupColumns {
            negotiated: format.role(Role::TlsGroup),
            offered: format.role(Role::TlsOfferedGroups),
            client: format.role(Role::Client),
            user_agent: format.role(Role::UserAgent),
            client_key,
        }
    }

    /// Count the groups of one line (`key` is scratch space).
    pub(crate) fn add(&self, groups: &mut GroupsAgg, rec: &Record<'_>, key: &mut Vec<u8>) {
        if let Some(i) = self.negotiated {
            groups.add_negotiated(rec.raw(i));
        }
        if let Some(i) = self.offered {
            let client = self.client_key.key(
                key,
                self.client.and_then(|c| rec.raw(c)).unwrap_or(b"-"),
                self.user_agent.and_then(|u| rec.raw(u)),
            );
            groups.add_offered(client, rec.raw(i));
        }
    }

    /// The post-quantum shares, when the format logs any group.
    pub(crate) fn report(&self, groups: &GroupsAgg) -> Option<PqReport> {
        (self.negotiated.is_some() || self.offered.is_some()).then(|| {
            groups.report(
                self.negotiated.is_some(),
                self.offered.is_some(),
                self.client_key.as_str(),
            )
        })
    }
}
