/// What happened in an ``RTMPPublishSession``, in order: the handshake, `connect` answered, the
/// stream created, publishing started; statuses the server reported along the way; a refusal.
public enum RTMPSessionEvent: Sendable, Hashable {
    /// S0, S1 and S2 arrived (RTMP 1.0 5.2); Set Chunk Size and `connect` went out.
    case handshakeDone
    /// `connect` was answered with `_result` (7.2.1.1); `releaseStream`, `FCPublish` and
    /// `createStream` went out.
    case connected
    /// `createStream` was answered with the message stream id (7.2.1.3); `publish` went out.
    case streamCreated(UInt32)
    /// `onStatus` `NetStream.Publish.Start` (7.2.2.6) arrived; `@setDataFrame` and the AAC
    /// sequence header went out, and audio may follow.
    case publishing
    /// A status the server reported that changes nothing: `onFCPublish`, an `_error` to
    /// `releaseStream`, a `warning` or `status` level `onStatus`.
    case status(RTMPStatus)
    /// The server refused or ended the session (an `_error` to `connect`, `createStream` or
    /// `publish`; an `onStatus` of level `error`; a `close` command). The session has failed.
    case error(RTMPStatus)
}
