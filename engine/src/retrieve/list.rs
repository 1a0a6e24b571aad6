//! Listing: the memories passing a filter, by ascending id, a page at a time.

use crate::error::Result;
use crate::item::MemoryItem;
use crate::memory::views::Advanced;
use crate::memory::Memory;
use crate::vocabulary::ListRequest;

impl Memory {}

impl<'a> Advanced<'a> {
    /// The memories `r` asks for, by ascending id: `r.limit` of them after skipping `r.offset`.
    /// Reads only: no access time is recorded.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] as [`crate::requests::ListRequest::check`];
    /// [`crate::Error::Store`] or [`crate::Error::Corrupt`].
    pub fn list(&self, r: &ListRequest) -> Result<Vec<MemoryItem>> {
        let listing = r.clone().check()?;
        let upto = listing.offset.saturating_add(listing.limit);
        let mut items = self.memory.advanced().scan(&listing.filter, upto)?;
        Ok(items.split_off(listing.offset.min(items.len())))
    }
}
