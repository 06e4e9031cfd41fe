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
        track.sampleRate = rate
        track.channels = channelCount
        track.profile = header.audioObjectType.description
        track.decodedFrames = stats.sampleCount
        track.bitrate = duration > 0 ? Int((Double(stats.frameBytes * 8) / duration).rounded()) : nil
        return ProbeReport(format: "adts", duration: duration, tracks: [track], bytesSkipped: stats.skippedBytes,
                           tagBytes: stats.id3Bytes, damage: damage, damageCount: stats.damageCount + changes)
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
