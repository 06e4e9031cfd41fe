/// Reads a whole ADTS stream and describes it: configuration from the first frame, packet and
/// PCM-frame counts, exact duration, average bitrate, and everything skipped or damaged.
public enum ADTSProbe {
    /// Why an ADTS stream cannot be described.
    public enum Failure: Error, Hashable, Sendable, CustomStringConvertible {
        /// No ADTS frame was found in `byteCount` bytes.
        case noFrames(byteCount: Int64)
        /// Reading failed.
        case bitstream(AACBitstreamError)

        /// A sentence for people: what it is and, for errors, where.
        public var description: String {
            switch self {
            case .noFrames(let count): "no ADTS frames found in \(count) bytes"
            case .bitstream(let error): error.description
            }
        }
    }

    /// Probes the stream `source` yields.
    public static func probe<Source: ByteSource>(_ source: Source) throws(Failure) -> ProbeReport {
        var reader = ADTSReader(source: source)
        var first: ADTSHeader?
        var channelCount: Int?
        var damage: [DamageEvent] = []
        var changes = 0
        var extensions = ImplicitExtensions()
        func collect(_ events: [ADTSStreamEvent]) {
            for event in events where damage.count < ProbeReport.damageLimit {
                if let event = event.damage { damage.append(event) }
            }
        }
        do {
            while let frame = try reader.nextFrame() {
                collect(reader.takeEvents())
                if let first {
                    if !sameConfiguration(first, frame.header) {
                        changes += 1
                        if damage.count < ProbeReport.damageLimit {
                            damage.append(DamageEvent(.inconsistentHeader, at: frame.offset,
                                                      message: "configuration changes at byte \(frame.offset) (frame \(reader.statistics.frameCount))"))
                        }
                    }
                } else {
                    first = frame.header
                    channelCount = channels(of: frame)
                }
                extensions.inspect(frame)
            }
        } catch {
            throw .bitstream(error)
        }
        collect(reader.takeEvents())
        let stats = reader.statistics
        guard let header = first, let rate = header.sampleRate else {
            throw .noFrames(byteCount: stats.skippedBytes + stats.id3Bytes)
        }
        let duration = Double(stats.sampleCount) / Double(rate)
        var track = ProbeReport.Track(id: 1, type: "audio", codec: "aac", sampleCount: stats.frameCount, duration: duration)
        // HE-AAC in ADTS is signalled implicitly: the header gives the core (AAC-LC at half the
        // rate, mono for v2); the frames say SBR and PS, and the decoder doubles the rate (and
        // makes stereo of PS), as FFmpeg's does.
        let factor = extensions.sbr ? 2 : 1
        track.sampleRate = rate * factor
        track.channels = extensions.parametricStereo && channelCount == 1 ? 2 : channelCount
        track.profile = extensions.parametricStereo ? "HE-AACv2" : extensions.sbr ? "HE-AAC" : header.audioObjectType.description
        track.decodedFrames = stats.sampleCount * Int64(factor)
        track.bitrate = duration > 0 ? Int((Double(stats.frameBytes * 8) / duration).rounded()) : nil
        return ProbeReport(format: "adts", duration: duration, tracks: [track], bytesSkipped: stats.skippedBytes,
                           tagBytes: stats.id3Bytes, damage: damage, damageCount: stats.damageCount + changes)
    }

    /// SBR and PS found in the first frames of an AAC-LC stream at a core rate (24 kHz or
    /// less), where HE-AAC is signalled only by the frames themselves (ISO/IEC 14496-3 1.6.6.2).
    struct ImplicitExtensions {
        /// The frames read: as many as hold two SBR headers of an encoder that sends one every
        /// 8th frame, ours and FFmpeg's included.
        static let frameLimit = 16
        private(set) var sbr = false
        private(set) var parametricStereo = false
        private var inspected = 0
        private var parser: SBRStreamParser?

        mutating func inspect(_ frame: ADTSFrame) {
            guard inspected < Self.frameLimit, frame.header.audioObjectType == .aacLC,
                  let rate = frame.header.sampleRate, rate <= 24000, frame.bytes.count > frame.header.headerLength else { return }
            inspected += 1
            let payload = Array(frame.bytes[frame.header.headerLength...])
            guard let block = try? RawDataBlock(parsing: payload, configuration: RawDataBlock.Configuration(frame.header),
                                                baseOffset: frame.offset + Int64(frame.header.headerLength)) else { return }
            if block.carriesSBR { sbr = true }
            var parser = parser ?? SBRStreamParser(outputSampleRate: rate * 2)
            if block.carriesParametricStereo(parser: &parser) { parametricStereo = true }
            self.parser = parser
        }
    }

    private static func sameConfiguration(_ a: ADTSHeader, _ b: ADTSHeader) -> Bool {
        a.mpegVersion == b.mpegVersion && a.profile == b.profile && a.samplingFrequencyIndex == b.samplingFrequencyIndex
            && a.channelConfiguration == b.channelConfiguration
    }

    /// Channels of channel configurations 1–7, or of the program_config_element that starts the
    /// first raw data block when the configuration is 0.
    static func channels(of frame: ADTSFrame) -> Int? {
        let configuration = frame.header.channelConfiguration
        if configuration != 0 { return configuration == 7 ? 8 : Int(configuration) }
        var bits = BitReader(frame.bytes, range: frame.header.headerLength..<frame.bytes.count, baseOffset: frame.offset)
        guard (try? bits.readBits(3)) == 5, let pce = try? ProgramConfigElement(from: &bits) else { return nil }
        return pce.channelCount
    }
}
