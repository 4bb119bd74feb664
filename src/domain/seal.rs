//! The lists' and exports' `seal` filter: which documents' seal verification
//! (`seal::Seal`, seven checks each `valid`, `invalid` or `unverified`) to keep.

wire_enum! {
    /// `seal=valid|invalid|unverified`, the document's `seal.status`:
    /// - `valid`: every one of the seven checks is valid;
    /// - `invalid`: at least one check is invalid (whatever the others are);
    /// - `unverified`: none is invalid and at least one could not be made (yet): the
    ///   SAT's certificate is not at hand, say. A document not verified yet (`seal`
    ///   null: stored before the service verified seals, until the background
    ///   verification reaches it) counts as unverified.
    SealFilter {
        Valid => "valid",
        Invalid => "invalid",
        Unverified => "unverified",
    }
}
