//! What an accountant reads, written the way Mexico writes it: amounts with `$` and
//! thousands separators (`amounts`), dates day first (`dates`), and an amount in words
//! with its currency and cents as every printed CFDI carries it (`words`). Codes with
//! their descriptions are [`crate::catalogs::Catalog::label`]. Pure functions over the
//! values as parsed, exact (no binary floats): what a value cannot be read as stays as
//! it was written.

mod amounts;
mod currency;
mod dates;
mod words;

pub use amounts::{money, number, percent};
pub use currency::is_pesos;
pub use dates::date_time;
pub use words::amount_in_words;
