//! The sandbox's 69-B list (`/docs/sandbox#list-69b`): a few of the sandbox's own
//! counterparties, one per situation, and `EFO130101AB1` (an `EFO` RFC, which the
//! sandbox's status service reports as EFOS), in the SAT's published format, so the
//! refresh, screening, summary and events work offline through the real parser.

/// What `--sat sandbox` loads when no `--list-69b-url` is given.
pub const LIST: &[u8] = include_bytes!("list_69b.csv");

/// The version's `source`.
pub const SOURCE: &str = "sandbox";

#[cfg(test)]
mod tests {
    use crate::domain::list_69b::Situation;

    #[test]
    fn the_built_in_list_parses_with_one_taxpayer_per_situation() {
        let list = crate::sat::list_69b::csv::parse(super::LIST).expect("parses");
        assert_eq!(
            list.updated_to.map(|d| d.to_string()).as_deref(),
            Some("2025-06-30")
        );
        assert_eq!(list.entries.len(), 5);
        for s in Situation::ALL {
            assert!(list.entries.iter().any(|e| e.situation == *s), "{s:?}");
        }
        let gas = list
            .entries
            .iter()
            .find(|e| e.rfc == "GAS050505GH6")
            .expect("listed");
        assert_eq!(gas.situation, Situation::Definitive);
        assert_eq!(
            gas.definitive.dof.map(|d| d.to_string()).as_deref(),
            Some("2024-09-24")
        );
    }
}
