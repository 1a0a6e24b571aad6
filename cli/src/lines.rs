//! Reading lines with a bound: a line (JSON Lines from a file or stdin) longer than the bound
//! is an error, never an ever-growing buffer.

use std::io::BufRead;

/// The longest JSON line read (ingest, embed): four times the largest text a memory may hold (JSON
/// escapes, the concise and brief versions). A longer line is an error, not an allocation.
pub(crate) const MAX_LINE_BYTES: usize = 4 * memloop::items::MAX_TEXT_BYTES_LIMIT;

/// The lines of a reader, each read only up to `max` bytes: a line that does not end by then
/// is an error instead of an ever-growing buffer.
pub(crate) struct BoundedLines<R> {
    input: R,
    max: usize,
    done: bool,
}

impl<R: BufRead> BoundedLines<R> {
    /// Lines of `input`, at most `max` bytes each.
    pub(crate) fn new(input: R, max: usize) -> Self {
        BoundedLines {
            input,
            max,
            done: false,
        }
    }
}

impl<R: BufRead> Iterator for BoundedLines<R> {
    type Item = std::io::Result<String>;

    fn next(&mut self) -> Option<Self::Item> {
        use std::io::{Error, ErrorKind, Read};
        if self.done {
            return None;
        }
        let mut buf = Vec::new();
        let read = (&mut self.input)
            .take(self.max as u64 + 1)
            .read_until(b'\n', &mut buf);
        match read {
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
            Ok(0) => None,
            Ok(_) if buf.len() > self.max => {
                self.done = true;
                let why = format!("longer than {} bytes", self.max);
                Some(Err(Error::new(ErrorKind::InvalidData, why)))
            }
            Ok(_) => {
                if buf.ends_with(b"\n") {
                    buf.pop();
                    if buf.ends_with(b"\r") {
                        buf.pop();
                    }
                }
                Some(String::from_utf8(buf).map_err(|e| Error::new(ErrorKind::InvalidData, e)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::BoundedLines;

    #[test]
    fn lines_longer_than_the_bound_are_errors_not_allocations() {
        let input = "short\r\nexactly10!\n".to_string() + &"x".repeat(50) + "\nnever read\n";
        let mut lines = BoundedLines::new(input.as_bytes(), 11);
        assert_eq!(lines.next().unwrap().unwrap(), "short");
        assert_eq!(lines.next().unwrap().unwrap(), "exactly10!");
        let err = lines.next().unwrap().unwrap_err();
        assert!(err.to_string().contains("longer than 11 bytes"), "{err}");
        assert!(
            lines.next().is_none(),
            "reading stops at the first overlong line"
        );
        let mut last = BoundedLines::new("no newline at the end".as_bytes(), 100);
        assert_eq!(last.next().unwrap().unwrap(), "no newline at the end");
        assert!(last.next().is_none());
        let bad = [b'o', b'k', 0xff, b'\n'];
        assert!(BoundedLines::new(&bad[..], 100).next().unwrap().is_err());
    }
}
