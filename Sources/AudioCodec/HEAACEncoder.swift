public import AACBitstream
public import MediaCore
internal import PCMAudio
public import SpectralBandReplication

/// An HE-AAC encoder (ISO/IEC 14496-3): v1 (SBR, object type 5, over AAC-LC), the spectral band
/// replication of KeyFrameKit's own (``/SpectralBandReplication/SBREncoder``) over libavcodec's
/// AAC-LC encoder running at half the rate; or, with ``parametricStereo``, v2 (object type 29):
/// a stereo input's mono downmix coded so, with the parametric stereo data in the SBR data
/// (subpart 8).
///
/// - The input (16–48 kHz, mono or stereo) is analysed by the SBR encoder, which also gives the
///   core its input at half the rate; the core is cut at the SBR crossover (libavcodec's
///   `cutoff`) and gets the bitrate less what the SBR data is expected to take.
/// - Each core packet gets the SBR data of its frame as an `EXT_SBR_DATA` fill element right
///   after its SCE or CPE (4.5.2.9): the packet's raw data block is parsed
///   (``/AACBitstream/RawDataBlock``), the element inserted, and the block written back.
/// - Packets stand for 2048 output samples. The stream's AudioSpecificConfig signals SBR
///   explicitly and hierarchically (object type 5, the output rate as the extension rate, then
///   AAC-LC at the core rate: 1.6.5.2); in ADTS the header says AAC-LC at the core rate and the
///   decoder finds SBR in the first frame (implicit signalling).
/// - ``priming`` is the decoder's delay at the output rate, 3010 samples (twice the core's 1024,
///   and the SBR decoder's 962; 3588 for v2, whose downmix costs a QMF analysis and synthesis):
///   an edit list or iTunSMPB with it makes the decode start at the input's first sample.
public final class HEAACEncoder {
    /// Output samples per packet (1024 core samples, doubled by SBR).
    public static let framesPerPacket = 2048
    /// The bitrate when none is given: 64 kb/s (Apple's HLS authoring rules put HE-AAC at or
    /// below it), brought to the input's channels when the encoder may lower it.
    public static let defaultBitrate = 64_000

    /// The target bitrate in bits per second, core and SBR together.
    public private(set) var bitrate: Int
    /// Whether ``bitrate`` is lowered to what HE-AAC takes at the input's channel count rather
    /// than refused.
    public let lowersBitrateToFit: Bool
    /// The core's scale-factor search.
    public let coder: AACEncoder.Coder
    /// Whether a stereo input is coded as HE-AAC v2: a mono downmix (HE-AAC v1) plus parametric
    /// stereo (ISO/IEC 14496-3 8).
    public let parametricStereo: Bool
    /// The PCM layout of the input, once known.
    public private(set) var inputFormat: PCMFormat?
    /// The stream's AudioSpecificConfig (explicit SBR over AAC-LC), once open.
    public private(set) var audioSpecificConfig: AudioSpecificConfig?
    /// The SBR settings chosen for the input, once open.
    public private(set) var tuning: SBRTuning?
    /// Output samples of delay at the start of the decoded output (3010; 3588 for v2).
    public private(set) var priming = 0
    /// Output samples after the input's end in the decoded output, once flushed.
    public private(set) var padding: Int?
    /// Input frames taken so far.
    public private(set) var inputFrameCount: Int64 = 0
    /// Packets produced so far.
    public private(set) var packetCount: Int64 = 0
    /// Bits of SBR data written so far (the fill elements' payloads).
    public var sbrPayloadBits: Int64 { sbr?.payloadBits ?? 0 }

    private var core: AACEncoder?
    private var sbr: SBREncoder?
    private var coreFormat: PCMFormat?
    private var blockConfiguration: RawDataBlock.Configuration?
    /// The input converted to planar float, channel after channel.
    private var planeStorage: [Float] = []
    private var coreInput: [[Float]] = []
    private var firstTime: MediaTime?
    private var outputFormat: FormatDescription?
    private var flushed = false
    private var announcement = GaplessAnnouncement()
    /// Packets (by index) a decoder may start at, beyond the first: their SBR frames carry a
    /// header and frequency-coded first values.
    private var independentPackets: Set<Int64> = []

    /// The priming once open, the valid length and padding once flushed.
    public func takeEvents() -> [StreamEvent] { gaplessEvents(&announcement) }

    /// An encoder that opens on the first PCM sample.
    ///
    /// - Parameters:
    ///   - bitrate: bits per second, core and SBR together, within
    ///     ``/SpectralBandReplication/SBRTuning/allowedBitrates(channelCount:outputSampleRate:parametricStereo:)``
    ///     (checked at open; about 10–64 kb/s mono, 12–128 kb/s stereo at 48 kHz).
    ///   - coder: the core's scale-factor search.
    ///   - lowersBitrateToFit: take `bitrate` as a default: at open it is brought into HE-AAC's
    ///     range for the input's channels (64 kb/s for stereo at most).
    ///   - parametricStereo: code a stereo input as HE-AAC v2 (a mono downmix plus parametric
    ///     stereo); a mono input is then refused.
    public init(bitrate: Int = 64_000, coder: AACEncoder.Coder = .twoLoop, lowersBitrateToFit: Bool = false,
                parametricStereo: Bool = false) throws(CodecError) {
        try FFmpegLibrary.load()
        // Whether the bitrate fits is checked at open, for the input's rate and channels, so
        // the error names the range that applies.
        guard bitrate > 0 else { throw .bitrateOutOfRange(bitrate, allowed: 8000...128_000) }
        self.bitrate = bitrate
        self.coder = coder
        self.lowersBitrateToFit = lowersBitrateToFit
        self.parametricStereo = parametricStereo
    }

    /// An encoder for `format`, opened now, so an unsupported rate, channel count or bitrate is an
    /// error before any work starts.
    public convenience init(format: PCMFormat, bitrate: Int = 64_000, coder: AACEncoder.Coder = .twoLoop,
                            lowersBitrateToFit: Bool = false, parametricStereo: Bool = false) throws(CodecError) {
        try self.init(bitrate: bitrate, coder: coder, lowersBitrateToFit: lowersBitrateToFit, parametricStereo: parametricStereo)
        try open(format)
    }

    /// The compressed format of the packets, once the encoder is open.
    public var formatDescription: FormatDescription? { outputFormat }

    /// Marks packet `index` as one a decoder may start at (an HLS segment's first packet): its
    /// SBR data carries a header and codes its first values without reference to the packet
    /// before. Mark before the packet is made.
    public func markIndependent(packet index: Int64) { independentPackets.insert(index) }

    private func open(_ format: PCMFormat) throws(CodecError) {
        let channels = format.channelCount
        if parametricStereo, channels != 2 {
            throw .unsupportedInput("HE-AAC v2 (parametric stereo) codes a stereo input; this one has \(channels) channel(s): use HE-AAC (v1) or AAC-LC")
        }
        if lowersBitrateToFit {
            let allowed = SBRTuning.allowedBitrates(channelCount: channels, outputSampleRate: format.sampleRate, parametricStereo: parametricStereo)
            bitrate = min(max(min(bitrate, parametricStereo ? 32_000 : 32_000 * channels), allowed.lowerBound), allowed.upperBound)
        }
        let tuning: SBRTuning
        do {
            tuning = try SBRTuning(bitrate: bitrate, channelCount: channels, outputSampleRate: format.sampleRate,
                                   parametricStereo: parametricStereo)
        } catch {
            switch error {
            case .bitrateOutOfRange(let rate, let allowed): throw .bitrateOutOfRange(rate, allowed: allowed)
            // In HE-AAC's words (the rates and channels it takes, and what to do instead).
            default: throw .unsupportedInput(error.description)
            }
        }
        let coreFormat = PCMFormat(sampleRate: format.sampleRate / 2, channelCount: tuning.channelCount, sampleFormat: .float32, isInterleaved: false)
        let core = try AACEncoder(format: coreFormat, bitrate: tuning.coreBitrate, coder: coder, cutoff: tuning.crossoverFrequency)
        guard var config = core.audioSpecificConfig, let extensionIndex = SamplingFrequencyIndex(frequency: format.sampleRate) else {
            throw .invalidState("the AAC-LC core gave no AudioSpecificConfig")
        }
        let blockConfiguration = RawDataBlock.Configuration(samplingFrequencyIndex: config.samplingFrequencyIndex,
                                                            channelConfiguration: config.channelConfiguration)
        // libavcodec marks SBR absent with a 0x2B7 sync extension; ours says it is there.
        // Stereo: explicit hierarchical signalling (object type 5, then AAC-LC; 1.6.5.2). Mono:
        // the backward-compatible form (AAC-LC, then 0x2B7 with SBR present and 0x548 with PS
        // absent), the only one that says no parametric stereo follows; with object type 5, a
        // decoder must be ready for PS and FFmpeg's outputs two channels (14496-3 1.6.6.1).
        // HE-AAC v2: explicit hierarchical signalling with object type 29 (PS) over SBR over
        // AAC-LC (1.6.5.2), the core's channel configuration 1; decoders output two channels.
        if tuning.parametricStereo {
            config.syncExtension = nil
            config.explicitExtension = AudioSpecificConfig.ExplicitExtension(signalledObjectType: .ps, samplingFrequencyIndex: extensionIndex)
        } else if channels == 1 {
            config.explicitExtension = nil
            config.syncExtension = AudioSpecificConfig.SyncExtension(objectType: .sbr, sbrPresent: true,
                                                                    samplingFrequencyIndex: extensionIndex, psPresent: false)
        } else {
            config.syncExtension = nil
            config.explicitExtension = AudioSpecificConfig.ExplicitExtension(signalledObjectType: .sbr, samplingFrequencyIndex: extensionIndex)
        }
        let bytes: [UInt8]
        do { bytes = try config.serialized() } catch { throw .bitstream(error) }
        self.tuning = tuning
        self.sbr = SBREncoder(tuning: tuning)
        self.core = core
        self.coreFormat = coreFormat
        self.blockConfiguration = blockConfiguration
        self.audioSpecificConfig = config
        self.inputFormat = format
        // The core's priming at the output rate, and the SBR decoder's delay (4.6.18: 962).
        self.priming = 2 * core.priming + self.sbr!.outputDelay - 2 * 1024
        self.coreInput = Array(repeating: [], count: tuning.channelCount)
        self.outputFormat = .audio(EncodedAudioFormat(codec: .aac, sampleRate: format.sampleRate, channelCount: channels,
                                                      framesPerPacket: Self.framesPerPacket, decoderConfiguration: bytes))
    }

    /// Encodes PCM bytes laid out as `format` says and returns the packets that are ready.
    /// `presentationTime` is used for the first call only.
    public func encode(pcm: UnsafeRawBufferPointer, format: PCMFormat, presentationTime: MediaTime? = nil) throws(CodecError) -> [MediaSample] {
        guard !flushed else { throw .invalidState("encode after flush: make a new encoder") }
        if inputFormat == nil { try open(format) }
        let total = try PCMEncoderInput.frameCount(of: pcm, format: format, opened: inputFormat)
        if firstTime == nil { firstTime = PCMEncoderInput.startTime(presentationTime, sampleRate: format.sampleRate) }
        guard total > 0 else { return [] }
        // One conversion into the planes; the SBR encoder reads them in place.
        withPlanes(frameCount: total) { pointers in
            PCMConversion.toPlanarFloat(source: pcm, format: format, sourceFrameCount: total, frameOffset: 0, frameCount: total,
                                        destination: pointers, destinationOffset: 0)
            sbr!.analyze(pointers.map { UnsafeBufferPointer(start: $0, count: total) }, frameCount: total, core: &coreInput)
        }
        inputFrameCount += Int64(total)
        return try encodeCore(flushing: false)
    }

    /// Runs `body` with a pointer to each channel's plane (`frameCount` floats each, one
    /// buffer), valid for the call only.
    private func withPlanes(frameCount: Int, _ body: ([UnsafeMutablePointer<Float>]) -> Void) {
        let channels = inputFormat?.channelCount ?? coreInput.count
        if planeStorage.count < channels * frameCount { planeStorage = [Float](repeating: 0, count: channels * frameCount) }
        planeStorage.withUnsafeMutableBufferPointer { storage in
            body((0..<channels).map { storage.baseAddress! + $0 * frameCount })
        }
    }

    /// Encodes the end of the input and drains the core; sets ``padding``.
    public func flush() throws(CodecError) -> [MediaSample] {
        guard !flushed else { return [] }
        guard sbr != nil else { flushed = true; return [] }
        sbr!.finishInput(core: &coreInput)
        // Half a core frame of silence after the input: the SBR decoder's 962-sample delay
        // pushes the input's last samples that far past what the core's packets cover.
        for channel in coreInput.indices { coreInput[channel].append(contentsOf: repeatElement(0, count: 512)) }
        let packets = try encodeCore(flushing: true)
        flushed = true
        padding = inputFrameCount == 0 ? 0 : max(0, Int(packetCount * Int64(Self.framesPerPacket) - Int64(priming) - inputFrameCount))
        return packets
    }

    /// Hands the core what is waiting for it and turns its packets into HE-AAC packets.
    private func encodeCore(flushing: Bool) throws(CodecError) -> [MediaSample] {
        guard let core, let coreFormat else { return [] }
        var corePackets: [MediaSample] = []
        let count = coreInput.first?.count ?? 0
        if count > 0 {
            var planar: [Float] = []
            planar.reserveCapacity(count * coreInput.count)
            for channel in coreInput.indices { planar.append(contentsOf: coreInput[channel]); coreInput[channel].removeAll(keepingCapacity: true) }
            var result: Result<[MediaSample], CodecError> = .success([])
            planar.withUnsafeBytes { raw in
                do throws(CodecError) { result = .success(try core.encode(pcm: raw, format: coreFormat)) } catch { result = .failure(error) }
            }
            corePackets += try result.get()
        }
        if flushing { corePackets += try core.flush() }
        var packets: [MediaSample] = []
        packets.reserveCapacity(corePackets.count)
        for corePacket in corePackets { packets.append(try withSBR(corePacket)) }
        return packets
    }

    /// `corePacket` with its SBR frame's fill element after its SCE or CPE, timed at the output
    /// rate.
    private func withSBR(_ corePacket: MediaSample) throws(CodecError) -> MediaSample {
        guard sbr != nil, let blockConfiguration, let outputFormat, let firstTime, let inputFormat else {
            throw .invalidState("the encoder is not open")
        }
        let index = packetCount
        let independent = independentPackets.remove(index) != nil
        let fill: FillElement
        do { fill = try sbr!.nextFrame(independent: independent) } catch { throw .unsupportedInput(error.description) }
        let data: [UInt8]
        do throws(AACBitstreamError) {
            var block = try RawDataBlock(parsing: corePacket.data, configuration: blockConfiguration)
            guard let channelElement = block.elements.firstIndex(where: \.isAudioChannelElement) else {
                throw AACBitstreamError.invalidField(structure: "raw_data_block", field: "id_syn_ele", value: -1, offset: 0,
                                                     allowed: "an SCE or CPE from the AAC-LC core")
            }
            try block.insert(.fill(fill), after: channelElement)
            data = try block.serialized()
        } catch {
            throw .bitstream(error)
        }
        let scale = Int32(inputFormat.sampleRate)
        let start = index * Int64(Self.framesPerPacket) - Int64(priming)
        packetCount += 1
        return MediaSample(data: data, presentationTime: MediaTime(value: firstTime.value + start, timescale: scale),
                           duration: MediaTime(value: Int64(Self.framesPerPacket), timescale: scale), format: outputFormat)
    }
}

/// Its ``/MediaCore/MediaTransform`` face (``PCMBytesEncoder``): PCM buffers in, HE-AAC
/// packets (2048 output frames each) out.
extension HEAACEncoder: PCMBytesEncoder, AudioEncoder {}

/// One stream's state, on one thread at a time; hand it over, don't share it.
@available(*, unavailable)
extension HEAACEncoder: Sendable {}
