internal import CFLAC
public import AudioBitstreams
public import MediaCore
public import SystemPackage

extension FLACStreamInfo {
    /// Reads the STREAMINFO block at the start of a native FLAC file (`fLaC`, after an ID3v2 tag
    /// if there is one); `nil` when the file cannot be read or is not native FLAC.
    ///
    /// Cheap: reads at most a few dozen bytes past the tag, and never loads libFLAC.
    public init?(path: FilePath) {
        guard let descriptor = try? FileDescriptor.open(path, .readOnly) else { return nil }
        defer { try? descriptor.close() }
        func read(_ count: Int, at offset: Int64) -> [UInt8]? {
            var bytes = [UInt8](repeating: 0, count: count)
            let got = try? bytes.withUnsafeMutableBytes { try descriptor.read(fromAbsoluteOffset: offset, into: $0) }
            return got == count ? bytes : nil
        }
        var start: Int64 = 0
        // libFLAC (and libavformat) skip an ID3v2 tag in front of the stream.
        if let id3 = read(10, at: 0), id3[0..<3].elementsEqual("ID3".utf8) {
            let size = id3[6..<10].reduce(Int64(0)) { $0 << 7 | Int64($1 & 0x7F) }
            start = 10 + size + (id3[5] & 0x10 != 0 ? 10 : 0)
        }
        // "fLaC", the first block's header (type 0: STREAMINFO, 34 bytes), then STREAMINFO.
        guard let header = read(42, at: start), header[0..<4].elementsEqual("fLaC".utf8),
              header[4] & 0x7F == 0, header[5..<8].elementsEqual([0, 0, 34]),
              let info = try? FLACStreamInfo(bytes: header[8...]) else { return nil }
        self = info
    }
}

/// A native FLAC file decoded by libFLAC, as a ``/MediaCore/PCMSource``: for true 32-bit FLAC
/// (`bits_per_raw_sample` 32, written by the flac 1.4 tool), of which FFmpeg 5.1 decodes no
/// frame. Any depth decodes (FFmpeg does ≤ 24 bits exactly, and ``AudioFileDecoder`` remains the
/// reader for those).
///
/// The PCM is interleaved signed 32-bit (``/MediaCore/PCMSampleFormat/int32``), at STREAMINFO's
/// rate and channel count. Samples are left-justified to 32 bits: a stream of fewer bits per
/// sample is shifted up by `32 - bitsPerSample`, so that full scale is the full 32-bit range at
/// every depth (a 16-bit sample `s` is delivered as `s << 16`, a 32-bit one as it is).
///
/// libFLAC is loaded on first use (dlopen of `libFLAC.so.12`), and decodes one frame per
/// ``nextBuffer()``, so memory stays one frame (at most 65535 samples per channel). Damage is
/// stepped over the way libFLAC 1.4 steps over it, and reported as ``/MediaCore/DamageEvent``s:
/// a frame that fails its CRC is dropped, lost sync searches on for the next frame, and lost
/// frames (a gap in the frame numbers) become silence of their length, up to 5 s or 50 frames. A
/// stream that ends before the total STREAMINFO declares is an error (a truncated file). libFLAC
/// checks the audio's MD5 against STREAMINFO's at the end; a mismatch in a stream that was not
/// otherwise damaged is reported as damage too.
public final class FLACFileDecoder {
    /// The file read.
    public let path: FilePath
    /// What the file's STREAMINFO declares.
    public let streamInfo: FLACStreamInfo
    /// The layout delivered: STREAMINFO's rate and channels, interleaved 32-bit integers.
    public let outputFormat: PCMFormat
    /// Frames delivered so far (including any silence put in place of damaged frames).
    public private(set) var decodedFrameCount: Int64 = 0

    /// Bits per sample of the stream (STREAMINFO): 32 for the files FFmpeg 5.1 cannot decode.
    public var bitsPerSample: Int { streamInfo.bitsPerSample }

    private let stream: UnsafeMutablePointer<kf_flac_stream>
    private var finished = false
    private var damage: [DamageEvent] = []
    /// Whether a frame decoded after damage: samples lost in the middle, not at the end.
    private var damagedInTheMiddle = false
    private var damaged = false

    /// Opens `path`, a native FLAC file, and reads its metadata blocks.
    ///
    /// - Throws: ``CodecError/unsupportedInput(_:)`` naming what is wrong (the caller names the
    ///   file): not a FLAC file (it does not start with `fLaC`), a file libFLAC cannot open or
    ///   whose metadata it cannot read, libFLAC missing (and the package to install).
    public init(path: FilePath) throws(CodecError) {
        self.path = path
        guard let info = FLACStreamInfo(path: path) else {
            if (try? FileDescriptor.open(path, .readOnly).close()) == nil {
                throw .unsupportedInput("the file cannot be opened")
            }
            throw .unsupportedInput("not a native FLAC file (it does not start with fLaC and a STREAMINFO block)")
        }
        try FLACLibrary.load()
        var status = FLAC__STREAM_DECODER_INIT_STATUS_OK
        guard let opened = kf_flac_stream_open(path.string, &status) else {
            throw FLACLibrary.error("opening the file", String(cString: kf_flac_init_status_string(status)))
        }
        stream = opened
        do throws(CodecError) {
            try FLACLibrary.check(kf_flac_stream_read_metadata(opened), opened, "reading the FLAC metadata")
            guard opened.pointee.has_stream_info != 0 else {
                throw .unsupportedInput("libFLAC found no STREAMINFO block")
            }
            // libFLAC's reading of STREAMINFO is the one decoding follows.
            var declared = info
            declared.sampleRate = Int(opened.pointee.sample_rate)
            declared.channelCount = Int(opened.pointee.channels)
            declared.bitsPerSample = Int(opened.pointee.bits_per_sample)
            declared.totalSamples = Int64(opened.pointee.total_samples)
            streamInfo = declared
        } catch {
            kf_flac_stream_close(opened)
            throw error
        }
        outputFormat = PCMFormat(sampleRate: streamInfo.sampleRate, channelCount: streamInfo.channelCount, sampleFormat: .int32,
                                 isInterleaved: true, channelMask: Self.channelMask(channelCount: streamInfo.channelCount))
    }

    deinit {
        kf_flac_stream_close(stream)
    }

    /// The speakers of FLAC's independent channel assignments (RFC 9639 9.1.3; `dwChannelMask`
    /// bits): 3 front left, right, centre; 4 quad; 5 and 6 with back left and right (and LFE);
    /// 7 6.1; 8 7.1. `nil` for mono and stereo, whose usual layout it is.
    static func channelMask(channelCount: Int) -> UInt64? {
        switch channelCount {
        case 3: 0x7
        case 4: 0x33
        case 5: 0x37
        case 6: 0x3F
        case 7: 0x70F
        case 8: 0x63F
        default: nil
        }
    }

    /// Whether `path` is a native FLAC file whose STREAMINFO declares 32 bits per sample: the
    /// FLAC that FFmpeg 5.1 cannot decode and this decoder can. Reads a few bytes; never loads
    /// libFLAC.
    public static func isFLAC32(path: FilePath) -> Bool {
        FLACStreamInfo(path: path)?.bitsPerSample == 32
    }

    /// The next frame of PCM (one FLAC frame, after any silence libFLAC put in place of lost
    /// frames), `nil` at the end.
    ///
    /// - Throws: ``CodecError/unsupportedInput(_:)`` for a stream that ends before the total
    ///   STREAMINFO declares (a truncated file, naming both counts), a frame whose channel count
    ///   differs from STREAMINFO's, or a fatal libFLAC error (a read error, out of memory).
    public func nextBuffer() throws(CodecError) -> PCMBuffer? {
        while !finished {
            let ok = kf_flac_stream_next(stream)
            let call = stream.pointee
            if call.error_count > 0 { noteErrors(call) }
            if ok == 0, call.allocation_failed != 0 {
                throw .unsupportedInput("out of memory for a FLAC frame")
            }
            try FLACLibrary.check(ok, stream, "decoding FLAC")
            if call.frame_count > 0 {
                if damaged { damagedInTheMiddle = true }
                return try frame(call)
            }
            if kf_flac_stream_state(stream) == FLAC__STREAM_DECODER_END_OF_STREAM {
                finished = true
                try finish()
            }
        }
        return nil
    }

    /// The frame (with any silence ahead of it) libFLAC wrote during the last call, as a buffer.
    private func frame(_ call: kf_flac_stream) throws(CodecError) -> PCMBuffer {
        guard Int(call.frame_channels) == outputFormat.channelCount else {
            throw .unsupportedInput("the FLAC frame at sample \(call.last_frame_sample_number) has \(call.frame_channels) "
                                    + "channels, its STREAMINFO \(outputFormat.channelCount)")
        }
        let silence = Int64(call.frame_length) - Int64(call.last_frame_length)
        if silence > 0 {
            damage.append(DamageEvent(.skippedBytes(count: 0), at: Self.offset(call),
                                      message: "\(silence) samples of lost FLAC frames before sample \(call.last_frame_sample_number) "
                                          + "were replaced by silence"))
            damaged = true
        }
        let count = Int(call.frame_length) * outputFormat.bytesPerFrame
        let bytes = call.frame_bytes.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
        decodedFrameCount += Int64(call.frame_length)
        return PCMBuffer(format: outputFormat, bytes: bytes)
    }

    /// Where the last call started reading, when libFLAC can say.
    private static func offset(_ call: kf_flac_stream) -> Int64? {
        call.start_position == UInt64.max ? nil : Int64(clamping: call.start_position)
    }

    /// Records what libFLAC's error callback reported during the last frame.
    private func noteErrors(_ call: kf_flac_stream) {
        damaged = true
        let offset = Self.offset(call)
        let place = offset.map { " after byte \($0)" } ?? ""
        let more = call.error_count > 1 ? ", and \(call.error_count - 1) more error\(call.error_count > 2 ? "s" : "")" : ""
        let what = Self.describe(call.first_error)
        if call.crc_mismatch != 0 && call.error_count == 1 {
            damage.append(DamageEvent(.checksumMismatch, at: offset, message: "a FLAC frame\(place) fails its CRC and was dropped"))
        } else {
            damage.append(DamageEvent(.skippedBytes(count: 0), at: offset,
                                      message: "damaged FLAC data\(place) (libFLAC: \(what)\(more)) was skipped to the next frame"))
        }
    }

    /// Words for what libFLAC's error callback reports.
    private static func describe(_ status: FLAC__StreamDecoderErrorStatus) -> String {
        switch status {
        case FLAC__STREAM_DECODER_ERROR_STATUS_LOST_SYNC: "lost sync"
        case FLAC__STREAM_DECODER_ERROR_STATUS_BAD_HEADER: "a corrupt frame header"
        case FLAC__STREAM_DECODER_ERROR_STATUS_FRAME_CRC_MISMATCH: "a frame that fails its CRC"
        case FLAC__STREAM_DECODER_ERROR_STATUS_UNPARSEABLE_STREAM: "reserved fields in use"
        case FLAC__STREAM_DECODER_ERROR_STATUS_BAD_METADATA: "a corrupt metadata block"
        default: String(cString: kf_flac_error_string(status))
        }
    }

    /// The end of the stream: its length against STREAMINFO's, then libFLAC's MD5 check.
    private func finish() throws(CodecError) {
        if streamInfo.totalSamples > 0, decodedFrameCount < streamInfo.totalSamples {
            let total = streamInfo.totalSamples
            // Frames libFLAC stepped over as damage, with frames after them, explain the
            // samples missing: a salvage. Damage only at the end is a truncation.
            guard !damagedInTheMiddle else {
                damage.append(DamageEvent(.truncated(declared: total, available: decodedFrameCount),
                                          message: "the FLAC stream decodes to \(decodedFrameCount) of the \(total) samples its STREAMINFO declares: "
                                              + "damaged frames were dropped"))
                return
            }
            throw .unsupportedInput("the flac stream ends after \(decodedFrameCount) of the \(total) samples its STREAMINFO declares "
                                    + "(a truncated file)")
        }
        if kf_flac_stream_finish(stream) == 0, !damaged {
            damage.append(DamageEvent(.checksumMismatch,
                                      message: "the decoded FLAC audio's MD5 differs from the one its STREAMINFO declares"))
        }
    }
}

extension FLACFileDecoder: PCMSource {
    /// ``outputFormat``: known before the first buffer.
    public var pcmFormat: PCMFormat? { outputFormat }

    /// ``nextBuffer()``.
    public func next() throws(CodecError) -> PCMBuffer? { try nextBuffer() }

    /// Seconds decoded, out of STREAMINFO's total when it gives one.
    public var progress: MediaProgress {
        let rate = Double(max(outputFormat.sampleRate, 1))
        return MediaProgress(mediaSeconds: Double(decodedFrameCount) / rate, totalSeconds: streamInfo.totalSamples > 0 ? Double(streamInfo.totalSamples) / rate : nil)
    }

    /// Damaged frames met since the last call.
    public func takeDamage() -> [DamageEvent] {
        defer { damage.removeAll() }
        return damage
    }
}

@available(*, unavailable)
extension FLACFileDecoder: Sendable {}

/// libFLAC, opened on first use (see CFLAC.h), and the one place its failures become
/// ``CodecError``s.
enum FLACLibrary {
    /// Opens libFLAC once; an error names the library or symbol that is missing and the package
    /// to install.
    static func load() throws(CodecError) {
        guard kf_flac_load() == 0 else {
            throw .unsupportedInput("FLAC with 32 bits per sample needs libFLAC: " + String(cString: kf_flac_load_error()))
        }
    }

    /// A libFLAC failure: what was being done and libFLAC's name for why.
    static func error(_ operation: String, _ reason: String) -> CodecError {
        .unsupportedInput("\(operation) failed: libFLAC \(reason)")
    }

    /// Throws when a libFLAC call returned false, or left its decoder in a state it cannot go on
    /// from (aborted by a read error, out of memory; `process_single` returns true when a read
    /// fails while it searches for a frame): the decoder's state says why.
    static func check(_ result: FLAC__bool, _ stream: UnsafeMutablePointer<kf_flac_stream>, _ operation: @autoclosure () -> String) throws(CodecError) {
        let state = kf_flac_stream_state(stream)
        let going = [FLAC__STREAM_DECODER_SEARCH_FOR_METADATA, FLAC__STREAM_DECODER_READ_METADATA,
                     FLAC__STREAM_DECODER_SEARCH_FOR_FRAME_SYNC, FLAC__STREAM_DECODER_READ_FRAME, FLAC__STREAM_DECODER_END_OF_STREAM]
        guard result == 0 || !going.contains(state) else { return }
        throw error(operation(), String(cString: kf_flac_state_string(state)))
    }
}
