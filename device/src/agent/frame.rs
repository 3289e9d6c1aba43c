//! Framing of the SDK socket: a 4-byte big-endian payload length, then that
//! many bytes of UTF-8 JSON (one [`Message`]).

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::message::{MAX_FRAME_BYTES, Message};

/// Why a frame could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The peer closed the connection cleanly, between frames.
    #[error("connection closed")]
    Closed,
    /// The connection ended in the middle of a frame.
    #[error("connection closed after {got} of {expected} bytes of a frame")]
    Truncated {
        /// Bytes the length prefix (or the prefix itself) called for.
        expected: usize,
        /// Bytes that arrived before the end.
        got: usize,
    },
    /// A frame longer than [`MAX_FRAME_BYTES`]; the stream cannot be resynchronised.
    #[error("frame of {size} bytes exceeds the {MAX_FRAME_BYTES}-byte limit")]
    Oversize {
        /// The payload length the prefix announced (or the encoder produced).
        size: usize,
    },
    /// The payload is not valid UTF-8 JSON.
    #[error("frame is not valid UTF-8 JSON: {0}")]
    BadJson(#[source] serde_json::Error),
    /// The payload is JSON but not one of the protocol's messages (unknown `type`,
    /// missing or unknown fields, not an object).
    #[error("frame is not a known message: {0}")]
    BadMessage(#[source] serde_json::Error),
    /// Reading from or writing to the socket failed.
    #[error("socket error: {0}")]
    Io(#[from] std::io::Error),
}

/// Encodes one message as a whole frame (length prefix included).
pub fn encode(message: &Message) -> Result<Vec<u8>, FrameError> {
    let payload = serde_json::to_vec(message).map_err(FrameError::BadMessage)?;
    if payload.len() > MAX_FRAME_BYTES {
        return Err(FrameError::Oversize { size: payload.len() });
    }
    let mut frame = Vec::with_capacity(4 + payload.len());
    frame.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    frame.extend_from_slice(&payload);
    Ok(frame)
}

/// Decodes a payload (the bytes after the length prefix).
pub fn decode_payload(payload: &[u8]) -> Result<Message, FrameError> {
    let value: serde_json::Value = serde_json::from_slice(payload).map_err(FrameError::BadJson)?;
    // serde also accepts a tagged enum written as an array (`["PAUSE", 1]`);
    // the protocol allows objects only.
    if !value.is_object() {
        return Err(FrameError::BadMessage(serde::de::Error::custom(
            "a message must be a JSON object",
        )));
    }
    serde_json::from_value(value).map_err(FrameError::BadMessage)
}

/// Writes one message as a frame and flushes it.
pub async fn write_frame<W: AsyncWrite + Unpin>(writer: &mut W, message: &Message) -> Result<(), FrameError> {
    let frame = encode(message)?;
    writer.write_all(&frame).await?;
    writer.flush().await?;
    Ok(())
}

/// Reads one frame. An oversize length is rejected before its payload is
/// read; the caller should then close the connection, since the stream can
/// no longer be resynchronised.
pub async fn read_frame<R: AsyncRead + Unpin>(reader: &mut R) -> Result<Message, FrameError> {
    let mut prefix = [0u8; 4];
    let got = read_up_to(reader, &mut prefix).await?;
    match got {
        0 => return Err(FrameError::Closed),
        4 => {}
        got => return Err(FrameError::Truncated { expected: 4, got }),
    }
    let size = u32::from_be_bytes(prefix) as usize;
    if size > MAX_FRAME_BYTES {
        return Err(FrameError::Oversize { size });
    }
    let mut payload = vec![0u8; size];
    let got = read_up_to(reader, &mut payload).await?;
    if got < size {
        return Err(FrameError::Truncated { expected: size, got });
    }
    decode_payload(&payload)
}

/// Fills `buffer` unless the stream ends first; returns how many bytes were read.
async fn read_up_to<R: AsyncRead + Unpin>(reader: &mut R, buffer: &mut [u8]) -> Result<usize, FrameError> {
    let mut filled = 0;
    while filled < buffer.len() {
        let n = reader.read(&mut buffer[filled..]).await?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_message_survives_a_round_trip() {
        let message = Message::Pause {
            id: 7,
            hierarchy: true,
        };
        let frame = encode(&message).expect("encodes");
        assert_eq!(&frame[..4], &(frame.len() as u32 - 4).to_be_bytes());
        let decoded = read_frame(&mut frame.as_slice()).await.expect("decodes");
        assert_eq!(decoded, message);
    }

    #[tokio::test]
    async fn a_short_payload_is_truncated_not_decoded() {
        let frame = encode(&Message::Resume { id: 1 }).expect("encodes");
        let error = read_frame(&mut &frame[..frame.len() - 1]).await.unwrap_err();
        assert!(matches!(error, FrameError::Truncated { .. }), "{error}");
    }
}
