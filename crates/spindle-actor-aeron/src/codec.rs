//! How a stream's messages become frame payloads and back: [`Codec`], with
//! [`PlainCodec`] for fixed-size plain data ([`Plain`]: bytes copied, no
//! allocation per message) and [`SerdeCodec`] for anything serde can
//! serialize (bincode).
//!
//! Invariants:
//! - a codec's [`tag`](Codec::tag) names both the message type and the
//!   encoding; every frame carries its stream's tag and a subscriber
//!   refuses a frame whose tag is not its own, with an error naming both
//!   (a publisher of `u32`s read as `u64`s would otherwise deliver garbage);
//! - `decode` either appends exactly `count` messages or fails and appends
//!   nothing a caller would deliver (the subscriber truncates on failure).

use crate::frame::FrameError;
use std::marker::PhantomData;

/// Encodes and decodes a stream's messages.
pub trait Codec<T>: Send + Sync + 'static {
    /// The stream's type tag: the same on both sides of a stream.
    fn tag(&self) -> Tag;
    /// Appends `items` to `out`.
    fn encode(&self, items: &[T], out: &mut Vec<u8>);
    /// Appends the `count` messages in `payload` to `out`.
    fn decode(&self, payload: &[u8], count: usize, out: &mut Vec<T>) -> Result<(), FrameError>;
    /// An upper bound of one message's encoded size, to size batches.
    fn max_size(&self) -> usize;
}

/// A stream's type tag: a 64-bit hash carried by every frame, and the
/// description it was made from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag {
    pub hash: u64,
    pub name: String,
}

impl Tag {
    /// The tag of `name` (FNV-1a).
    pub fn of(name: impl Into<String>) -> Tag {
        let name = name.into();
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        Tag { hash: h, name }
    }
}

/// Fixed-size plain data: written as `SIZE` little-endian bytes.
///
/// Implemented for the integer and float types; implement it for a
/// message struct of your own by writing its fields in order.
pub trait Plain: Copy + Send + 'static {
    /// Encoded size in bytes.
    const SIZE: usize;
    /// The type's name in tags: change it when the layout changes.
    const NAME: &'static str;
    /// Writes `self` into `out` (exactly `SIZE` bytes).
    fn write(&self, out: &mut [u8]);
    /// Reads a value from `bytes` (exactly `SIZE` bytes).
    fn read(bytes: &[u8]) -> Self;
}

macro_rules! plain_numbers {
    ($($t:ty),*) => {$(
        impl Plain for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            const NAME: &'static str = stringify!($t);
            #[inline]
            fn write(&self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
            #[inline]
            fn read(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("SIZE bytes"))
            }
        }
    )*};
}

plain_numbers!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);

/// The codec for [`Plain`] messages.
pub struct PlainCodec<T>(PhantomData<fn() -> T>);

impl<T: Plain> PlainCodec<T> {
    pub fn new() -> PlainCodec<T> {
        PlainCodec(PhantomData)
    }
}

impl<T: Plain> Default for PlainCodec<T> {
    fn default() -> Self {
        PlainCodec::new()
    }
}

impl<T: Plain> Codec<T> for PlainCodec<T> {
    fn tag(&self) -> Tag {
        Tag::of(format!("plain:{}:{}", T::NAME, T::SIZE))
    }

    fn encode(&self, items: &[T], out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + items.len() * T::SIZE, 0);
        for (chunk, item) in out[start..].chunks_exact_mut(T::SIZE).zip(items) {
            item.write(chunk);
        }
    }

    fn decode(&self, payload: &[u8], count: usize, out: &mut Vec<T>) -> Result<(), FrameError> {
        if payload.len() != count * T::SIZE {
            return Err(FrameError(format!(
                "{count} messages of {} bytes ({}) need {} payload bytes, the frame has {}",
                T::SIZE,
                T::NAME,
                count * T::SIZE,
                payload.len()
            )));
        }
        out.extend(payload.chunks_exact(T::SIZE).map(T::read));
        Ok(())
    }

    fn max_size(&self) -> usize {
        T::SIZE
    }
}

/// The codec for serde types: bincode's standard encoding, one message
/// after another. `name` goes into the tag: give the type and its version
/// (`"orders::Fill v2"`).
pub struct SerdeCodec<T> {
    name: String,
    max_size: usize,
    _type: PhantomData<fn() -> T>,
}

impl<T> SerdeCodec<T> {
    /// A codec whose messages encode to at most `max_size` bytes each (a
    /// bound used to size batches; a larger message gets a frame of its own).
    pub fn new(name: impl Into<String>, max_size: usize) -> SerdeCodec<T> {
        SerdeCodec {
            name: name.into(),
            max_size: max_size.max(1),
            _type: PhantomData,
        }
    }
}

impl<T> Codec<T> for SerdeCodec<T>
where
    T: serde::Serialize + serde::de::DeserializeOwned + Send + 'static,
{
    fn tag(&self) -> Tag {
        Tag::of(format!("serde-bincode2:{}", self.name))
    }

    fn encode(&self, items: &[T], out: &mut Vec<u8>) {
        for item in items {
            bincode::serde::encode_into_std_write(item, out, bincode::config::standard())
                .expect("writing into a Vec cannot fail");
        }
    }

    fn decode(&self, mut payload: &[u8], count: usize, out: &mut Vec<T>) -> Result<(), FrameError> {
        for i in 0..count {
            let (item, used) =
                bincode::serde::decode_from_slice::<T, _>(payload, bincode::config::standard())
                    .map_err(|e| {
                        FrameError(format!("message {i} of {count} ({}): {e}", self.name))
                    })?;
            out.push(item);
            payload = &payload[used..];
        }
        if !payload.is_empty() {
            return Err(FrameError(format!(
                "{} bytes left after the frame's {count} messages ({})",
                payload.len(),
                self.name
            )));
        }
        Ok(())
    }

    fn max_size(&self) -> usize {
        self.max_size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_round_trips_and_refuses_a_short_payload() {
        let c = PlainCodec::<u64>::new();
        let mut bytes = Vec::new();
        c.encode(&[1, 2, u64::MAX], &mut bytes);
        assert_eq!(bytes.len(), 24);
        let mut back = Vec::new();
        c.decode(&bytes, 3, &mut back).unwrap();
        assert_eq!(back, [1, 2, u64::MAX]);
        assert!(c
            .decode(&bytes[..20], 3, &mut back)
            .unwrap_err()
            .0
            .contains("need 24"));
        assert_ne!(c.tag(), PlainCodec::<u32>::new().tag());
        assert_ne!(c.tag(), PlainCodec::<i64>::new().tag());
    }

    #[test]
    fn serde_round_trips_and_names_a_bad_message() {
        let c = SerdeCodec::<(u32, String)>::new("pair v1", 64);
        let items = vec![(1, "one".to_string()), (2, "two".to_string())];
        let mut bytes = Vec::new();
        c.encode(&items, &mut bytes);
        let mut back = Vec::new();
        c.decode(&bytes, 2, &mut back).unwrap();
        assert_eq!(back, items);
        let e = c.decode(&bytes[..3], 2, &mut Vec::new()).unwrap_err();
        assert!(e.0.contains("pair v1"), "{e}");
        assert!(c
            .decode(&bytes, 1, &mut Vec::new())
            .unwrap_err()
            .0
            .contains("left after"));
    }
}
