//! Page views: a page and the assets the same client loads with it.
//!
//! A user's requests are grouped by client and ordered by time. A page request
//! ([`PathKind::Page`]) starts a view; the styles, scripts, images and other files the
//! same client requests within [`PAGE_VIEW_SECONDS`] of that page belong to it. A
//! request for a non-page before any page (or later than that) is not part of a view.
//! With Basic auth every one of those requests verifies the password again, so the
//! cost a person waits for is per view, not per request.

use std::collections::BTreeMap;

use super::model::{PathKind, Request};

/// Requests of the same client within this many seconds after a page are its assets.
pub const PAGE_VIEW_SECONDS: f64 = 5.0;

/// Page views of one user.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Views {
    /// Page views.
    pub views: u64,
    /// Requests that are part of a view (the pages and their assets).
    pub requests: u64,
}

impl Views {
    /// Requests per page view, `None` without views.
    pub fn per_view(self) -> Option<f64> {
        (self.views > 0).then(|| self.requests as f64 / self.views as f64)
    }
}

/// The page views among one user's requests (requests without a time are left out).
pub(crate) fn page_views<'r>(requests: impl Iterator<Item = &'r Request>) -> Views {
    let window_us = (PAGE_VIEW_SECONDS * 1e6) as i64;
    let mut by_client: BTreeMap<Option<&str>, Vec<(i64, bool)>> = BTreeMap::new();
    for r in requests {
        if let Some(b) = r.begin_us {
            by_client
                .entry(r.client.as_deref())
                .or_default()
                .push((b, r.kind == PathKind::Page));
        }
    }
    let mut out = Views::default();
    for mut reqs in by_client.into_values() {
        // Pages first within a second: `%t` has second resolution, and a page is
        // requested before its assets.
        reqs.sort_unstable_by_key(|&(b, page)| (b, !page));
        let mut view_start: Option<i64> = None;
        for (b, page) in reqs {
            if page {
                view_start = Some(b);
                out.views += 1;
                out.requests += 1;
            } else if view_start.is_some_and(|s| b - s <= window_us) {
                out.requests += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(client: &str, at_s: i64, kind: PathKind) -> Request {
        Request {
            user: Some("sam".into()),
            status: Some(200),
            begin_us: Some(at_s * 1_000_000),
            offset_minutes: Some(0),
            day_offset_minutes: None,
            duration_us: None,
            pid: None,
            kind,
            client: Some(client.into()),
            head: None,
            line_len: None,
        }
    }

    #[test]
    fn a_page_and_its_assets_by_the_same_client() {
        use PathKind::{Image, Page, Script, Style};
        let reqs = [
            // An asset before any page: not in a view.
            r("a", 0, Image),
            r("a", 10, Page),
            r("a", 10, Style),
            r("a", 11, Script),
            r("a", 14, Image),
            // Too late for the view of 10.
            r("a", 16, Image),
            // Another client at the same time: its own view.
            r("b", 10, Page),
            r("b", 12, Image),
            // The page logged in the same second as its first asset.
            r("a", 30, Image),
            r("a", 30, Page),
        ];
        let v = page_views(reqs.iter());
        assert_eq!(v.views, 3);
        assert_eq!(v.requests, 4 + 2 + 2);
        assert_eq!(v.per_view(), Some(8.0 / 3.0));
        assert_eq!(page_views([r("a", 1, Image)].iter()).per_view(), None);
    }
}
