//! Event types and the filters of the events feed (`GET /v1/events`).

use crate::domain::FieldErrors;

/// Every event the service publishes. The one list of names: webhooks subscribe to
/// them, the feed filters by them, and `events.event` holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    ExtractionUpdate,
    EntityUpdate,
    InvoiceCreated,
    InvoiceUpdated,
    RetentionCreated,
    RetentionUpdated,
    /// A load of the 69-B list changed the situation of a counterparty of an entity's
    /// invoices (`events::list_69b`).
    Counterparty69bChanged,
}

/// What an event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    Entity,
    Extraction,
    Invoice,
    Retention,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::ExtractionUpdate,
        Kind::EntityUpdate,
        Kind::InvoiceCreated,
        Kind::InvoiceUpdated,
        Kind::RetentionCreated,
        Kind::RetentionUpdated,
        Kind::Counterparty69bChanged,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::ExtractionUpdate => "extraction.update",
            Kind::EntityUpdate => "entity.update",
            Kind::InvoiceCreated => "invoice.created",
            Kind::InvoiceUpdated => "invoice.updated",
            Kind::RetentionCreated => "retention.created",
            Kind::RetentionUpdated => "retention.updated",
            Kind::Counterparty69bChanged => "counterparty.69b_changed",
        }
    }

    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    pub fn resource(self) -> Resource {
        match self {
            Kind::ExtractionUpdate => Resource::Extraction,
            Kind::EntityUpdate | Kind::Counterparty69bChanged => Resource::Entity,
            Kind::InvoiceCreated | Kind::InvoiceUpdated => Resource::Invoice,
            Kind::RetentionCreated | Kind::RetentionUpdated => Resource::Retention,
        }
    }

    /// "a, b or c": the names, for validation messages.
    pub fn names_listed() -> String {
        let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.join(""),
        }
    }
}

impl Resource {
    pub const ALL: [Resource; 4] = [
        Resource::Entity,
        Resource::Extraction,
        Resource::Invoice,
        Resource::Retention,
    ];

    /// `resource.type` of the payload.
    pub fn type_name(self) -> &'static str {
        match self {
            Resource::Entity => "Entity",
            Resource::Extraction => "Extraction",
            Resource::Invoice => "Invoice",
            Resource::Retention => "Retention",
        }
    }

    /// The first segment of `source` and `resource.path`.
    pub fn collection(self) -> &'static str {
        match self {
            Resource::Entity => "entities",
            Resource::Extraction => "extractions",
            Resource::Invoice => "invoices",
            Resource::Retention => "retentions",
        }
    }

    /// `"<collection>/<id>"`: the payload's `source`, stored to filter by resource.
    pub fn source(self, id: &str) -> String {
        format!("{}/{id}", self.collection())
    }
}

/// Filters of `GET /v1/events`, validated: which types (empty: all) and which
/// resources (`source` values; empty: all).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FeedFilter {
    pub kinds: Vec<Kind>,
    pub sources: Vec<String>,
    pub oldest_first: bool,
}

impl FeedFilter {
    /// `event` (a comma list of names), `resource_type` (`Entity`, `Extraction`,
    /// `Invoice`), `resource_id` (an already parsed UUID) and `order` (`newest`, the
    /// default, or `oldest`).
    pub fn parse(
        events: Option<&str>,
        resource_type: Option<&str>,
        resource_id: Option<&str>,
        order: Option<&str>,
        errors: &mut FieldErrors,
    ) -> FeedFilter {
        let mut kinds: Vec<Kind> = vec![];
        for name in events.into_iter().flat_map(|e| e.split(',')).map(str::trim) {
            match Kind::parse(name) {
                Some(k) if !kinds.contains(&k) => kinds.push(k),
                Some(_) => {}
                None => {
                    errors.add(
                        "event",
                        &format!("must be a list of {}", Kind::names_listed()),
                    );
                    break;
                }
            }
        }
        let resources: Vec<Resource> = match resource_type.map(str::trim) {
            None => Resource::ALL.to_vec(),
            Some(t) => match Resource::ALL.into_iter().find(|r| r.type_name() == t) {
                Some(r) => {
                    // A type is the set of event kinds about it.
                    if kinds.is_empty() {
                        kinds = Kind::ALL
                            .into_iter()
                            .filter(|k| k.resource() == r)
                            .collect();
                    } else {
                        kinds.retain(|k| k.resource() == r);
                        if kinds.is_empty() {
                            errors.add("resource_type", "matches none of the events asked for");
                        }
                    }
                    vec![r]
                }
                None => {
                    errors.add(
                        "resource_type",
                        "must be Entity, Extraction, Invoice or Retention",
                    );
                    vec![]
                }
            },
        };
        // Ids are unique across collections, so an id alone names its resource.
        let sources = resource_id
            .map(|id| resources.iter().map(|r| r.source(id)).collect())
            .unwrap_or_default();
        let oldest_first = match order.map(str::trim) {
            None | Some("newest") => false,
            Some("oldest") => true,
            Some(_) => {
                errors.add("order", "must be newest or oldest");
                false
            }
        };
        FeedFilter {
            kinds,
            sources,
            oldest_first,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(
        events: Option<&str>,
        rtype: Option<&str>,
        rid: Option<&str>,
        order: Option<&str>,
    ) -> Result<FeedFilter, FieldErrors> {
        let mut errors = FieldErrors::new();
        let f = FeedFilter::parse(events, rtype, rid, order, &mut errors);
        if errors.is_empty() {
            Ok(f)
        } else {
            Err(errors)
        }
    }

    #[test]
    fn names_round_trip_and_list_for_messages() {
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.name()), Some(k));
        }
        assert_eq!(Kind::parse("invoice.deleted"), None);
        assert_eq!(
            Kind::names_listed(),
            "extraction.update, entity.update, invoice.created, invoice.updated, retention.created, retention.updated or counterparty.69b_changed"
        );
    }

    #[test]
    fn event_filters_repeat_or_use_commas_and_reject_unknown_names() {
        let f = parse(
            Some("invoice.created, invoice.updated,invoice.created"),
            None,
            None,
            None,
        )
        .expect("valid");
        assert_eq!(f.kinds, [Kind::InvoiceCreated, Kind::InvoiceUpdated]);
        assert!(!f.oldest_first);
        let e = parse(Some("invoice.created,nope"), None, None, None).expect_err("bad");
        assert!(e.contains("event"));
        assert!(parse(None, None, None, Some("sideways"))
            .expect_err("bad")
            .contains("order"));
        assert!(
            parse(None, None, None, Some("oldest"))
                .expect("ok")
                .oldest_first
        );
    }

    #[test]
    fn resource_filters_become_kinds_and_sources() {
        let f = parse(None, Some("Invoice"), Some("abc"), None).expect("valid");
        assert_eq!(f.kinds, [Kind::InvoiceCreated, Kind::InvoiceUpdated]);
        assert_eq!(f.sources, ["invoices/abc"]);
        let any = parse(None, None, Some("abc"), None).expect("valid");
        assert_eq!(
            any.sources,
            [
                "entities/abc",
                "extractions/abc",
                "invoices/abc",
                "retentions/abc"
            ]
        );
        assert!(any.kinds.is_empty());
        let narrowed = parse(
            Some("entity.update,invoice.updated"),
            Some("Invoice"),
            None,
            None,
        )
        .expect("ok");
        assert_eq!(narrowed.kinds, [Kind::InvoiceUpdated]);
        assert!(parse(Some("entity.update"), Some("Invoice"), None, None)
            .expect_err("disjoint")
            .contains("resource_type"));
        assert!(parse(None, Some("invoice"), None, None)
            .expect_err("case matters")
            .contains("resource_type"));
    }
}
