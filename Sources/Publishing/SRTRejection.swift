internal import CSRT

/// What a failed SRT handshake means for a publisher: libsrt's rejection code
/// (`srt_getrejectreason`) as a ``PublishingError`` in words, permanent or worth retrying.
///
/// Codes below 1000 are libsrt's own (`SRT_REJ_*`: a wrong passphrase, a missing one, a
/// version or configuration mismatch); 1000…1999 are the standard server codes of SRT's access
/// control (`SRT_REJX_*`, mostly HTTP's numbers plus 1000: a stream id refused, a stream name
/// taken); 2000 and above are a server's own. A server that is overloaded, down or failing
/// inside (`1402`, `1500`, `1502`, `1503`) and a listener that is busy or closing are passing
/// troubles; every other refusal is permanent, since trying again with the same stream id and
/// passphrase gets the same answer.
enum SRTRejection {
    /// The error for rejection `code` at `destination` (the messages name the destination
    /// masked, and never contain the passphrase or the stream id).
    static func error(code: Int32, destination: SRTDestination) -> PublishingError {
        let target = destination.description
        if code >= SRT_REJC_USERDEFINED {
            return PublishingError(.refused, "\(target): the SRT server refused the stream (its own code \(code))")
        }
        if code >= SRT_REJC_PREDEFINED {
            let (words, permanent) = serverCode(code, destination: destination)
            let reason: PublishingError.Reason = code == SRT_REJX_CONFLICT ? .nameInUse : permanent ? .refused : .connectionFailed
            return PublishingError(reason, "\(target): the SRT server refused the stream: \(words) (code \(code))")
        }
        let words: String
        let reason: PublishingError.Reason
        switch UInt32(bitPattern: code) {
        case SRT_REJ_BADSECRET.rawValue:
            (reason, words) = (.refused, "wrong passphrase (the listener's passphrase differs)")
        case SRT_REJ_UNSECURE.rawValue:
            (reason, words) = destination.passphrase == nil
                ? (.refused, "the listener requires a passphrase: add passphrase= to the URL")
                : (.refused, "the listener has no passphrase: remove passphrase= from the URL, or set one on the listener")
        case SRT_REJ_VERSION.rawValue:
            (reason, words) = (.refused, "the listener requires a newer SRT version")
        case SRT_REJ_MESSAGEAPI.rawValue, SRT_REJ_CONGESTION.rawValue, SRT_REJ_FILTER.rawValue, SRT_REJ_GROUP.rawValue:
            (reason, words) = (.refused, "the listener is not set up for live transmission (\(libraryWords(code)))")
        case SRT_REJ_PEER.rawValue:
            (reason, words) = (.refused, "the listener rejected the connection (check the stream id)")
        case SRT_REJ_ROGUE.rawValue:
            (reason, words) = (.protocolViolation, "the listener's handshake was malformed")
        case SRT_REJ_TIMEOUT.rawValue:
            (reason, words) = (.timedOut, "no SRT listener answered in time")
        case SRT_REJ_BACKLOG.rawValue:
            (reason, words) = (.connectionFailed, "the listener is busy (its backlog is full)")
        case SRT_REJ_CLOSE.rawValue:
            (reason, words) = (.connectionFailed, "the listener is closing")
        default:
            (reason, words) = (.connectionFailed, "the connection failed: \(libraryWords(code))")
        }
        return PublishingError(reason, "\(target): \(words)")
    }

    /// A standard server code (`SRT_REJX_*`) in words, and whether it is permanent.
    private static func serverCode(_ code: Int32, destination: SRTDestination) -> (String, Bool) {
        let streamID = destination.streamID == nil ? "no stream id is set" : "the stream id (set, not shown)"
        return switch code {
        case SRT_REJX_FALLBACK: ("no reason given", true)
        case SRT_REJX_KEY_NOTSUP: ("\(streamID) uses a key the server does not support", true)
        case SRT_REJX_FILEPATH: ("the resource in \(streamID) is not found", true)
        case SRT_REJX_HOSTNOTFOUND: ("the host (h=) in \(streamID) is not known to the server", true)
        case SRT_REJX_BAD_REQUEST: ("bad request: \(streamID) is not what the server expects", true)
        case SRT_REJX_UNAUTHORIZED: ("unauthorized: the credentials in \(streamID) were not accepted", true)
        case SRT_REJX_OVERLOAD: ("the server is overloaded", false)
        case SRT_REJX_FORBIDDEN: ("forbidden: the server does not allow this stream", true)
        case SRT_REJX_NOTFOUND: ("not found: the stream or application in \(streamID) does not exist", true)
        case SRT_REJX_BAD_MODE: ("the mode (m=) in \(streamID) is not supported", true)
        case SRT_REJX_UNACCEPTABLE: ("the stream's parameters are not acceptable", true)
        case SRT_REJX_CONFLICT: ("conflict: the stream is already being published", true)
        case SRT_REJX_NOTSUP_MEDIA: ("the media type (t=) is not supported", true)
        case SRT_REJX_LOCKED: ("the stream is locked", true)
        case SRT_REJX_FAILED_DEPEND: ("a session it depends on has ended", true)
        case SRT_REJX_ISE: ("the server failed (internal error)", false)
        case SRT_REJX_UNIMPLEMENTED: ("the server does not implement this request", true)
        case SRT_REJX_GW: ("the server is a gateway whose upstream refused", false)
        case SRT_REJX_DOWN: ("the service is down for now", false)
        case SRT_REJX_VERSION: ("the server does not support this SRT version", true)
        case SRT_REJX_NOROOM: ("the server has no room to store the stream", true)
        default: ("an access-control refusal", true)
        }
    }

    /// libsrt's words for one of its own codes.
    private static func libraryWords(_ code: Int32) -> String {
        guard let text = kf_srt_rejectreason_str(code) else { return "rejection \(code)" }
        return String(cString: text)
    }
}
