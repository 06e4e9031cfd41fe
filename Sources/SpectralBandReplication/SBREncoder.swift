public import AACBitstream
internal import MediaCore
internal import RealModule

/// The SBR half of an HE-AAC encoder (ISO/IEC 14496-3, 4.6.18; 3GPP TS 26.404): it takes the
/// input at the output rate, gives the AAC-LC core its input at half the rate, and makes the
/// SBR data of each core frame, as the `EXT_SBR_DATA` fill element that follows the frame's
/// SCE or CPE.
///
/// - The core's input comes from a delay-compensated half-band decimator: core sample `j` is
///   input sample `2j`, so the core codes the input on time.
/// - Each channel runs a 64-band complex QMF analysis; slot `m` covers input samples up to
///   `64m + 63`.
/// - SBR frame `p` (the one that rides in core packet `p`) describes QMF slots
///   `32p − ``frameSlotOffset`` ..< +32`: the decoder delays the core by its priming (1024 core
///   samples, 2048 output samples) and its own QMF pair by 962 samples, so those are the slots its
///   output of packet `p` stands for.
/// - Each frame gets one time/frequency grid (FIXFIX with one envelope, or, when the transient
///   detector fires, VARFIX or FIXVAR with a short envelope at the onset: `grid(transientAt:)`),
///   envelopes on the high (or low) frequency table, two or three noise floors
///   from the original's tonality, an inverse-filtering mode per noise band from the
///   original's tonality against that of the band the decoder copies up, and a sine flag
///   (`bs_add_harmonic`) per high-resolution band where the original has a sinusoid the
///   copy-up will not make (``MissingHarmonicsDetector``); such a band codes the sinusoid's
///   energy.
/// - A header goes in the first frame, every ``headerInterval`` frames, and in every frame asked
///   to be independent; an independent frame also codes its first envelope and noise floor
///   in frequency, so a decoder can start there.
///
/// Not Sendable: it is one stream's state; hand it over, don't share it.
public struct SBREncoder {
    /// QMF slots between the start of the stream's slot numbering and SBR frame 0's first slot,
    /// counted backwards: frame `p` starts at slot `32p − frameSlotOffset`. From the decoder's
    /// delay, 3010 output samples: (3010 − 577) / 64 ≈ 38, with 577 the delay of the QMF
    /// analysis and synthesis pair.
    public static let frameSlotOffset = 38
    /// The decoded output's delay, in output samples, over the input: the core's priming at
    /// the output rate (2 × 1024) and the decoder's SBR delay (962).
    public static let decoderDelay = 3010
    /// Frames between headers when no frame is asked to be independent (about 0.34 s at 48 kHz).
    public static let headerInterval = 8
    /// QMF slots per SBR frame (16 SBR time slots of 2 QMF slots each, for 1024-sample cores).
    public static let slotsPerFrame = 32
    /// With parametric stereo, the delay of the downmix in output samples: it is made in the QMF
    /// domain and synthesised back for the core (the pair's 577, and one to make it even).
    public static let downmixDelay = 578
    /// With parametric stereo, the QMF slots from an SBR frame's first to the middle of the run
    /// its stereo parameters are measured over (the decoder reaches a frame's parameters at its
    /// last slot and interpolates towards them from the frame before's).
    public static let stereoWindowOffset = 16

    /// The stream's settings.
    public let tuning: SBRTuning
    private var banks: [QMFAnalysisBank]
    private var decimator: HalfBandDecimator
    /// The QMF slots of the channels the SBR data describes (with parametric stereo, the
    /// downmix).
    private var histories: [QMFSlotHistory]
    /// Input samples per input channel waiting for a whole QMF slot (64), in the analysis scale.
    private var pending: [[Float]]
    /// With parametric stereo: the input's left and right QMF slots, the downmix's state, its
    /// synthesis back to the time domain (the core's input), the PS data's frame-to-frame state.
    private var stereoHistories: [QMFSlotHistory] = []
    private var stereo = ParametricStereoAnalysis()
    private var downmixSynthesis = QMFSynthesisBank()
    private var parametricStereoHistory = ParametricStereoHistory()
    private var detector = SBRTransientDetector()
    private var channelHistories: [SBRChannelHistory]
    private var harmonics: [MissingHarmonicsDetector]
    private var inputFinished = false
    /// Frames made so far.
    public private(set) var frameCount: Int64 = 0
    /// SBR bits written so far (the fill elements' payloads, without their 7–15 element bits).
    public private(set) var payloadBits: Int64 = 0
    private var scratchReal = [Float](repeating: 0, count: 64)
    private var scratchImaginary = [Float](repeating: 0, count: 64)

    /// An encoder with `tuning`'s settings.
    public init(tuning: SBRTuning) {
        self.tuning = tuning
        let channels = tuning.channelCount
        banks = Array(repeating: QMFAnalysisBank(), count: tuning.inputChannelCount)
        decimator = HalfBandDecimator(channelCount: channels)
        histories = Array(repeating: QMFSlotHistory(), count: channels)
        pending = Array(repeating: [], count: tuning.inputChannelCount)
        channelHistories = Array(repeating: SBRChannelHistory(), count: channels)
        harmonics = Array(repeating: MissingHarmonicsDetector(bandCount: tuning.tables.highBandCount), count: channels)
        if tuning.parametricStereo {
            stereoHistories = [QMFSlotHistory(), QMFSlotHistory()]
            // One sample more than the QMF pair's 577, so the whole delay is even (whole core
            // samples): core sample j is input sample 2j − 578.
            var ignored: [Float] = []
            decimator.process([0], channel: 0, into: &ignored)
        }
    }

    /// QMF slots the frames lag the input by: ``frameSlotOffset``, and with parametric stereo
    /// the downmix's QMF analysis and synthesis (``downmixDelay`` samples, 9 slots).
    public var slotOffset: Int { tuning.parametricStereo ? Self.frameSlotOffset + Self.downmixDelay / 64 : Self.frameSlotOffset }

    /// The decoded output's delay over the input, in output samples: ``decoderDelay``, and with
    /// parametric stereo the downmix's ``downmixDelay`` more.
    public var outputDelay: Int { tuning.parametricStereo ? Self.decoderDelay + Self.downmixDelay : Self.decoderDelay }

    /// Takes `frameCount` frames of planar input (one buffer per channel, samples in −1...1) and
    /// appends the core's input to `core`, one array per channel: half as many frames, time-aligned
    /// (core sample `j` is input sample `2j`), each given once the decimator's look-ahead (55
    /// input samples) has arrived; ``finishInput(core:)`` gives the rest.
    public mutating func analyze(_ planes: [UnsafeBufferPointer<Float>], frameCount: Int, core: inout [[Float]]) {
        precondition(planes.count == tuning.inputChannelCount && core.count == tuning.channelCount, "one plane per channel")
        for channel in 0..<tuning.inputChannelCount {
            let plane = UnsafeBufferPointer(rebasing: planes[channel][0..<frameCount])
            if !tuning.parametricStereo { decimator.process(plane, channel: channel, into: &core[channel]) }
            var offset = 0
            while offset < frameCount {
                let take = min(64 - pending[channel].count, frameCount - offset)
                for index in offset..<(offset + take) { pending[channel].append(plane[index] * 32768) }
                offset += take
                if pending[channel].count == 64 { analyzeSlot(channel: channel) }
            }
        }
        if tuning.parametricStereo { downmixSlots(core: &core) }
    }

    /// Ends the input: appends the rest of the core's input (the decimator's tail) to `core`.
    /// Later frames read the slots past the input as silence.
    public mutating func finishInput(core: inout [[Float]]) {
        guard !inputFinished else { return }
        inputFinished = true
        if tuning.parametricStereo {
            // The downmix lags by the QMF pair's delay: silence through it brings the input's
            // last samples out of the synthesis.
            for _ in 0..<(Self.downmixDelay / 64 + 2) {
                for channel in 0..<2 {
                    pending[channel].append(contentsOf: repeatElement(0, count: 64 - pending[channel].count))
                    analyzeSlot(channel: channel)
                }
            }
            downmixSlots(core: &core)
        }
        for channel in 0..<tuning.channelCount { decimator.finish(channel: channel, into: &core[channel]) }
    }

    private mutating func analyzeSlot(channel: Int) {
        pending[channel].withUnsafeBufferPointer { input in
            scratchReal.withUnsafeMutableBufferPointer { real in
                scratchImaginary.withUnsafeMutableBufferPointer { imaginary in
                    banks[channel].analyze(input, real: real, imaginary: imaginary)
                }
            }
        }
        pending[channel].removeAll(keepingCapacity: true)
        scratchReal.withUnsafeBufferPointer { real in
            scratchImaginary.withUnsafeBufferPointer { imaginary in
                if tuning.parametricStereo {
                    stereoHistories[channel].append(real: real, imaginary: imaginary)
                } else {
                    histories[channel].append(real: real, imaginary: imaginary)
                }
            }
        }
    }

    /// With parametric stereo: the downmix of every slot both channels have and the downmix
    /// does not, appended to the history the SBR data is made from, and synthesised back to
    /// the time domain into the decimator for the core.
    private mutating func downmixSlots(core: inout [[Float]]) {
        var synthesized: [Float] = []
        var real = [Float](repeating: 0, count: 64), imaginary = [Float](repeating: 0, count: 64)
        var left = ([Float](repeating: 0, count: 64), [Float](repeating: 0, count: 64))
        var right = left
        var samples = [Float](repeating: 0, count: 64)
        while histories[0].endSlot < min(stereoHistories[0].endSlot, stereoHistories[1].endSlot) {
            let slot = histories[0].endSlot
            for k in 0..<64 {
                (left.0[k], left.1[k]) = stereoHistories[0].sample(band: k, slot: slot)
                (right.0[k], right.1[k]) = stereoHistories[1].sample(band: k, slot: slot)
            }
            left.0.withUnsafeBufferPointer { lr in left.1.withUnsafeBufferPointer { li in
                right.0.withUnsafeBufferPointer { rr in right.1.withUnsafeBufferPointer { ri in
                    real.withUnsafeMutableBufferPointer { mr in imaginary.withUnsafeMutableBufferPointer { mi in
                        stereo.downmix(left: (lr, li), right: (rr, ri), real: mr, imaginary: mi)
                    } }
                } }
            } }
            real.withUnsafeBufferPointer { mr in imaginary.withUnsafeBufferPointer { mi in
                histories[0].append(real: mr, imaginary: mi)
                samples.withUnsafeMutableBufferPointer { out in downmixSynthesis.synthesize(real: mr, imaginary: mi, into: out) }
            } }
            for sample in samples { synthesized.append(sample / 32768) }
        }
        if !synthesized.isEmpty { decimator.process(synthesized, channel: 0, into: &core[0]) }
    }

    /// Appends one slot of silence to every input channel (and the downmix): the frames at the
    /// end of the stream reach past the input.
    private mutating func appendSilentSlot() {
        for channel in 0..<tuning.inputChannelCount {
            pending[channel].append(contentsOf: repeatElement(0, count: 64 - pending[channel].count))
            analyzeSlot(channel: channel)
        }
        if tuning.parametricStereo {
            var ignored: [[Float]] = [[]]
            // The core's input is complete: what the downmix synthesises now is not used.
            downmixSlots(core: &ignored)
        }
    }

    /// The SBR data of the next frame (the one for the next core packet), as the fill element
    /// that goes right after the packet's SCE or CPE.
    ///
    /// - Parameter independent: a decoder may start at this frame (an HLS segment or part, a
    ///   thread's seam, a live join): it gets a header and frequency-coded first values.
    /// - Throws: ``SBREncodingError/bitstream(_:)`` if the data cannot be written (never for
    ///   data this encoder makes).
    public mutating func nextFrame(independent: Bool = false) throws(SBREncodingError) -> FillElement {
        let first = Int(frameCount) * Self.slotsPerFrame - slotOffset
        let last = first + Self.slotsPerFrame
        // With parametric stereo, the stereo parameters are measured past the frame's end (and
        // the hybrid filters read 6 slots either side).
        let stereoSlots = (first + Self.stereoWindowOffset)..<(first + Self.stereoWindowOffset + Self.slotsPerFrame)
        let needed = tuning.parametricStereo ? max(last, stereoSlots.upperBound + 6) : last
        // At the end of the stream the last frames reach past the input: silence.
        if inputFinished {
            while histories.contains(where: { $0.endSlot < needed }) || stereoHistories.contains(where: { $0.endSlot < needed }) {
                appendSilentSlot()
            }
        }
        // The core gives packet p only once it has core frame p + 1, which covers these slots.
        precondition(histories.allSatisfy { $0.endSlot >= last }, "SBR frame asked for before its input was analysed")
        // Every frame with a header is one a decoder may start at (a listener joining a live
        // stream, a cut of the ADTS file): its first values are coded in frequency, never
        // against a frame the decoder has not seen.
        let startsHere = independent || frameCount % Int64(Self.headerInterval) == 0
        let data = estimate(slots: first..<last)
        let before = channelHistories
        let stereoBefore = parametricStereoHistory
        let element: FillElement
        do throws(AACBitstreamError) {
            var extendedData: BitString?
            if tuning.parametricStereo {
                extendedData = try parametricStereoData(slots: stereoSlots, startsHere: startsHere).extendedData(history: &parametricStereoHistory)
            }
            var sbr = SBRExtensionData(header: startsHere ? tuning.header : nil, coupling: false, channels: data, extendedData: extendedData)
            sbr.chooseDeltaCoding(tables: tuning.tables, history: channelHistories, independent: startsHere)
            element = try FillElement(sbr: sbr, tables: tuning.tables, history: &channelHistories)
        } catch {
            channelHistories = before
            parametricStereoHistory = stereoBefore
            throw .bitstream(error)
        }
        payloadBits += Int64(element.payload.count * 8)
        frameCount += 1
        // Keep two slots before the next frame (the tonality predictor's memory), and the next
        // frame's stereo run.
        let keep = Int(frameCount) * Self.slotsPerFrame - slotOffset - 2
        for channel in 0..<tuning.channelCount { histories[channel].discard(before: keep) }
        for channel in stereoHistories.indices { stereoHistories[channel].discard(before: keep + 2 + Self.stereoWindowOffset - 6) }
        return element
    }

    // MARK: - Estimation

    /// The PS data of a frame (one envelope, 20 bands, coarse IID, mixing procedure R_A) from the
    /// stereo input over `slots`; a header and frequency-coded values where a decoder may start.
    private func parametricStereoData(slots: Range<Int>, startsHere: Bool) -> ParametricStereoFrame {
        let parameters = ParametricStereoAnalysis.parameters(left: stereoHistories[0], right: stereoHistories[1], slots: slots)
        var frame = ParametricStereoFrame(header: startsHere ? ParametricStereoHeader(iidMode: 1, iccMode: 1) : nil,
                                          variableBorders: false, borderPositions: [],
                                          iidTimeDelta: [false], iid: [parameters.intensity],
                                          iccTimeDelta: [false], icc: [parameters.coherence])
        frame.chooseDeltaCoding(history: parametricStereoHistory, independent: startsHere)
        return frame
    }

    /// Grid, envelopes, noise floors and inverse filtering of the frame over `slots`.
    private mutating func estimate(slots: Range<Int>) -> [SBRChannelData] {
        let tables = tuning.tables
        // The grid, from the transient detector on the channels' summed high-band energy.
        var slotEnergies = [Float](repeating: 0, count: Self.slotsPerFrame / 2)
        let bandCount = Float(tables.k2 - tables.kx)
        for pair in 0..<(Self.slotsPerFrame / 2) {
            var energy: Float = 0
            for history in histories {
                for slot in (slots.lowerBound + 2 * pair)..<(slots.lowerBound + 2 * pair + 2) {
                    for band in tables.kx..<tables.k2 { energy += history.energy(band: band, slot: slot) }
                }
            }
            slotEnergies[pair] = energy / (2 * bandCount)
        }
        let grid = Self.grid(transientAt: detector.transient(in: slotEnergies))
        // 1.5 dB steps when the header says so or the grid has one envelope (FIXFIX with one
        // envelope is always decoded at 1.5 dB), else 3 dB.
        let fineSteps = tuning.header.amplitudeResolution == 0 || (grid.frameClass == .fixFix && grid.envelopeCount == 1)
        let stepsPerOctave: Float = fineSteps ? 2 : 1
        let maximumValue = fineSteps ? 127 : 63

        var result: [SBRChannelData] = []
        let kx = tables.kx
        for channel in 0..<tuning.channelCount {
            let history = histories[channel]
            // Tonality of the original and of what the decoder copies up, per subband; with the
            // frame's energies, where the original has sinusoids the copy-up will not make.
            let tonality = bandTonality(history, slots: slots)
            let frameEnergies = Self.subbandEnergies(history, bands: (kx - 1)..<(tables.k2 + 1), slots: slots)
            let flaggedBefore = harmonics[channel].flagged
            let sinusoids = harmonics[channel].detect(highBands: tables.high, energies: frameEnergies,
                                                      originalGain: tonality.original, sourceGain: tonality.source,
                                                      transient: grid.frameClass != .fixFix)
            // Envelopes: the mean energy per subband and QMF slot of each band, quantised as
            // the decoder dequantises it, E = 2^(q/a + 6) (4.6.18.3.5). A band holding a flagged
            // sinusoid codes the sinusoid's energy: the decoder's sine takes it in one subband.
            // A sine new in this frame starts at the transient's envelope (l_A), so the
            // envelopes before it code the band's mean.
            let sineStart = grid.transientEnvelope ?? 0
            var envelopes: [[Int]] = []
            for envelope in 0..<grid.envelopeCount {
                let from = slots.lowerBound + 2 * grid.borders[envelope]
                let to = slots.lowerBound + 2 * grid.borders[envelope + 1]
                let energies = Self.subbandEnergies(history, bands: kx..<tables.k2, slots: from..<to)
                let bands = tables.bands(highResolution: grid.frequencyResolutions[envelope])
                var values: [Int] = []
                for index in 0..<(bands.count - 1) {
                    let range = (bands[index] - kx)..<(bands[index + 1] - kx)
                    var energy = range.reduce(Float(0)) { $0 + energies[$1] } / Float(range.count)
                    let held = (0..<tables.highBandCount).filter {
                        sinusoids[$0] && (envelope >= sineStart || flaggedBefore[$0])
                            && tables.high[$0] >= bands[index] && tables.high[$0 + 1] <= bands[index + 1]
                    }
                    if !held.isEmpty {
                        let tones = held.map {
                            MissingHarmonicsDetector.sinusoidEnergy(energies, band: (tables.high[$0] - kx)..<(tables.high[$0 + 1] - kx))
                        }
                        let sinusoid = tones.reduce(0, +) / Float(tones.count)
                        energy = max(energy, MissingHarmonicsDetector.codedEnergy(sinusoid: sinusoid, width: range.count))
                    }
                    let q = energy > 64 ? Int((stepsPerOctave * (Float.log2(energy) - 6)).rounded()) : 0
                    values.append(min(max(q, 0), maximumValue))
                }
                envelopes.append(values)
            }
            // Inverse filtering and noise floors from the tonalities, per noise band.
            var modes: [UInt8] = []
            var noise: [Int] = []
            for band in 0..<tables.noiseBandCount {
                let range = tables.noise[band]..<tables.noise[band + 1]
                var original: Float = 0
                var source: Float = 0
                for k in range {
                    original += tonality.original[k - tables.kx]
                    source += tonality.source[k - tables.kx]
                }
                original /= Float(range.count)
                source /= Float(range.count)
                let mode = Self.inverseFilteringMode(original: original, source: source)
                modes.append(mode)
                // The noise the decoder adds, as a ratio to the envelope's energy: what the
                // original's tonality leaves unpredictable, at most the envelope itself.
                let ratio = min(max(1 / original, 1.0 / 16_000_000), 1)
                noise.append(min(max(Int((6 - Float.log2(ratio)).rounded()), 0), 30))
            }
            let noiseFloors = Array(repeating: noise, count: grid.noiseFloorCount)
            result.append(SBRChannelData(grid: grid,
                                         envelopeTimeDelta: Array(repeating: false, count: grid.envelopeCount),
                                         noiseTimeDelta: Array(repeating: false, count: grid.noiseFloorCount),
                                         inverseFilteringModes: modes, envelopes: envelopes, noiseFloors: noiseFloors,
                                         addHarmonics: sinusoids.contains(true) ? sinusoids : nil))
        }
        return result
    }

    /// The mean energy per QMF slot of each subband in `bands` over `slots`; 0 for a band
    /// outside 0..<64.
    private static func subbandEnergies(_ history: QMFSlotHistory, bands: Range<Int>, slots: Range<Int>) -> [Float] {
        let scale = 1 / Float(max(slots.count, 1))
        return bands.map { band in
            guard (0..<QMFSlotHistory.bandCount).contains(band) else { return 0 }
            return slots.reduce(Float(0)) { $0 + history.energy(band: band, slot: $1) } * scale
        }
    }

    /// The grid of a frame (4.5.2.8 `sbr_grid`), from where the transient detector saw an onset
    /// (an SBR time slot, 0..<16), if anywhere:
    /// - none: FIXFIX, one envelope at the high frequency resolution;
    /// - at the frame's start: VARFIX with borders 0, 4, 16;
    /// - in the first half: VARFIX with a border at the onset (rounded down to an even slot) and
    ///   another 4 slots later, so a short envelope holds the attack and the envelope before it
    ///   none of it; the pointer names it (`l_A`, for the decoder's limiter) and the noise floors
    ///   split there;
    /// - in the second half: FIXVAR with a border at the onset, the last envelope the transient's.
    ///
    /// Every grid starts at slot 0 and ends at 16, so no frame depends on the one before.
    /// Envelopes shorter than 6 slots take the low frequency resolution.
    static func grid(transientAt slot: Int?) -> SBRGrid {
        guard let slot else { return .fixFix(envelopeCount: 1, highFrequencyResolution: true) }
        let border = min(max(slot / 2 * 2, 0), 14)
        var grid: SBRGrid
        switch border {
        case 0:
            grid = SBRGrid(frameClass: .varFix, leadingRelativeBorders: [1], pointer: 0, frequencyResolutions: [false, false])
        case 2...8:
            // Steps of 2·v + 2 slots: v = border/2 − 1 reaches the onset, v = 1 four slots more.
            var steps = [border / 2 - 1]
            if border + 4 < SBRGrid.timeSlots { steps.append(1) }
            grid = SBRGrid(frameClass: .varFix, leadingRelativeBorders: steps, pointer: 2,
                           frequencyResolutions: Array(repeating: false, count: steps.count + 1))
        default:
            grid = SBRGrid(frameClass: .fixVar, trailingRelativeBorders: [(SBRGrid.timeSlots - border) / 2 - 1], pointer: 2,
                           frequencyResolutions: [false, false])
        }
        let borders = grid.borders
        grid.frequencyResolutions = (0..<grid.envelopeCount).map { borders[$0 + 1] - borders[$0] >= 6 }
        return grid
    }

    /// The prediction gain of every subband from `kx` to `k2` over the frame: of the original,
    /// and of the low subband the decoder's patches copy into it (4.6.18.6.3).
    private func bandTonality(_ history: QMFSlotHistory, slots: Range<Int>) -> (original: [Float], source: [Float]) {
        let tables = tuning.tables
        var original: [Float] = []
        for band in tables.kx..<tables.k2 { original.append(SubbandTonality.predictionGain(history, band: band, slots: slots)) }
        var source = original
        var target = tables.kx
        var lowGain: [Int: Float] = [:]
        for patch in tables.patches {
            for offset in 0..<patch.count where target + offset < tables.k2 {
                let from = patch.sourceStart + offset
                let gain = lowGain[from] ?? SubbandTonality.predictionGain(history, band: from, slots: slots)
                lowGain[from] = gain
                source[target + offset - tables.kx] = gain
            }
            target += patch.count
        }
        return (original, source)
    }

    /// The inverse-filtering level of a noise band (`bs_invf_mode`, 4.5.2.8: 0 off, 1 low,
    /// 2 mid, 3 strong) from the prediction gains of the original and of the copied-up source,
    /// by 3GPP TS 26.404 §5.6.4's region table (without its energy and transient variants).
    static func inverseFilteringMode(original: Float, source: Float) -> UInt8 {
        let sourceBorders: [Float] = [1, 10, 14, 19]
        let originalBorders: [Float] = [0, 3, 7, 10]
        func region(_ gain: Float, _ borders: [Float]) -> Int {
            let decibels = 10 * Float.log10(max(gain, 1))
            return borders.filter { decibels >= $0 }.count
        }
        let table: [[UInt8]] = [[2, 1, 0, 0, 0], [2, 1, 0, 0, 0], [3, 2, 1, 0, 0], [3, 3, 2, 0, 0], [3, 3, 2, 0, 0]]
        let sourceRegion = min(region(source, sourceBorders), 4)
        let originalRegion = min(region(original, originalBorders), 4)
        return table[sourceRegion][originalRegion]
    }
}

@available(*, unavailable)
extension SBREncoder: Sendable {}
