internal import RealModule

/// The 2:1 decimator that feeds the AAC-LC core of HE-AAC at half the output rate (ISO/IEC
/// 14496-3 4.6.18: the core runs at fs/2, SBR rebuilds the upper band; 3GPP TS 26.404 runs the
/// same split). Planar `Float`, any scale, any number of channels, any chunk sizes.
///
/// **Filter.** A linear-phase half-band FIR of ``tapCount`` = 113 taps (4·28 + 1), a Kaiser
/// window (β = 8.75) on the ideal half-band `sin(πn/2)/(πn)`, designed at init. Every
/// tap at an even, non-zero distance from the centre is zero (so are both end taps); the 56
/// odd taps are scaled to sum to ½ (unity gain at DC, centre tap ½). Band edges, as fractions
/// of the input rate fs:
/// - passband 0…0.225·fs (0.9·fs/4; 10.8 kHz at 48 kHz): ripple within ±0.0005 dB;
/// - −6 dB at fs/4 (the half-band point);
/// - stopband 0.275·fs (1.1·fs/4; 13.2 kHz at 48 kHz) … fs/2: at least 86 dB down.
/// Only 12–13.2 kHz (at 48 kHz) folds into the output with less than 80 dB rejection, and it
/// lands at 10.8–12 kHz, above every SBR crossover the encoder uses.
///
/// **Delay compensated.** Output sample j is the filtered input at sample 2j exactly
/// (`y[j] = ½·x[2j] + Σ_m h_m·(x[2j − (2m−1)] + x[2j + (2m−1)])`, m = 1…28, `x` = 0 before the
/// stream): the 56-sample group delay is removed, so an impulse at input 2j comes out at output
/// j. Output j is emitted once input `2j + 55` has arrived (``lookahead``); ``finish(channel:into:)``
/// appends the zero tail, so a stream of N input samples yields `(N + 1)/2` outputs in total,
/// whatever the chunking.
///
/// **Cost.** Only the kept outputs are computed, with the zero taps skipped and the symmetric
/// ones folded: 29 multiplies per output sample.
public struct HalfBandDecimator: Sendable {
    /// Half the number of non-zero off-centre taps on each side: taps reach ±(2·halfOrder − 1).
    private static let halfOrder = 28
    /// The Kaiser window's β.
    private static let kaiserBeta = 8.75

    /// Length of the FIR, 4·28 + 1 (its two end taps are zero, as every even-offset tap is).
    public static let tapCount = 4 * halfOrder + 1

    /// Input samples beyond input 2j needed before output j can be emitted: 2·28 − 1 = 55.
    public static let lookahead = 2 * halfOrder - 1

    /// The passband edge as a fraction of the input rate (0.9·fs/4), ripple within ±0.0005 dB.
    public static let passbandEdge = 0.225
    /// The stopband edge as a fraction of the input rate (1.1·fs/4), rejection ≥ 86 dB.
    public static let stopbandEdge = 0.275

    /// Channels, each an independent stream.
    public let channelCount: Int

    /// `h_m` for m = 1…28, the tap at offsets ±(2m − 1).
    private let taps: [Float]
    private var channels: [ChannelState]

    /// The state of one channel: the input not yet consumed, `x[first ..< first + pending.count]`,
    /// from which output `next` is due.
    private struct ChannelState: Sendable {
        var pending: [Float]
        var first: Int
        var next: Int
        var received: Int

        init() {
            // x[−55 ..< 0] are the zeros before the stream.
            pending = [Float](repeating: 0, count: HalfBandDecimator.lookahead)
            pending.reserveCapacity(8192)
            first = -HalfBandDecimator.lookahead
            next = 0
            received = 0
        }
    }

    /// A decimator for `channelCount` planar channels, designing its filter.
    public init(channelCount: Int) {
        precondition(channelCount > 0, "HalfBandDecimator needs at least one channel")
        self.channelCount = channelCount
        taps = Self.design()
        channels = Array(repeating: ChannelState(), count: channelCount)
    }

    /// The full impulse response, ``tapCount`` coefficients centred at index 56.
    public var impulseResponse: [Float] {
        var response = [Float](repeating: 0, count: Self.tapCount)
        let centre = 2 * Self.halfOrder
        response[centre] = 0.5
        for m in 1...Self.halfOrder {
            response[centre - (2 * m - 1)] = taps[m - 1]
            response[centre + (2 * m - 1)] = taps[m - 1]
        }
        return response
    }

    /// Kaiser-windowed ideal half-band (window over ±56), odd taps normalised to sum ½.
    private static func design() -> [Float] {
        let span = Double(2 * halfOrder)
        let scale = besselI0(kaiserBeta)
        var values = [Double]()
        for m in 1...halfOrder {
            let offset = Double(2 * m - 1)
            let ideal = Double.sin(Double.pi * offset / 2) / (Double.pi * offset)
            let ratio = offset / span
            let window = besselI0(kaiserBeta * (1 - ratio * ratio).squareRoot()) / scale
            values.append(ideal * window)
        }
        let sum = 2 * values.reduce(0, +)
        return values.map { Float($0 * 0.5 / sum) }
    }

    /// The modified Bessel function of the first kind, order 0, by its power series.
    private static func besselI0(_ x: Double) -> Double {
        var sum = 1.0, term = 1.0, k = 1.0
        let quarterSquare = x * x / 4
        while term > 1e-17 * sum {
            term *= quarterSquare / (k * k)
            sum += term
            k += 1
        }
        return sum
    }

    /// Feeds `input` (the next samples of `channel`, any count) and appends every output sample
    /// that has become available to `output`.
    public mutating func process(_ input: UnsafeBufferPointer<Float>, channel: Int, into output: inout [Float]) {
        precondition(channels.indices.contains(channel), "HalfBandDecimator: no channel \(channel)")
        channels[channel].pending.append(contentsOf: input)
        channels[channel].received += input.count
        drain(channel: channel, into: &output)
    }

    /// Feeds `input` (the next samples of `channel`) and appends the available output samples.
    public mutating func process(_ input: [Float], channel: Int, into output: inout [Float]) {
        input.withUnsafeBufferPointer { process($0, channel: channel, into: &output) }
    }

    /// Feeds one chunk per channel (`input[c]` for channel c; chunks may differ in length) and
    /// appends each channel's available output to `output[c]`.
    ///
    /// - Precondition: `input.count == channelCount`; `output` has `channelCount` arrays.
    public mutating func process(planar input: [[Float]], into output: inout [[Float]]) {
        precondition(input.count == channelCount && output.count == channelCount, "HalfBandDecimator: one array per channel")
        for channel in 0..<channelCount {
            process(input[channel], channel: channel, into: &output[channel])
        }
    }

    /// Ends `channel`'s stream: appends its remaining output (the tail, computed with zeros after
    /// the last input) so that the stream has produced `(N + 1)/2` samples for N inputs, and
    /// resets the channel for a new stream.
    public mutating func finish(channel: Int, into output: inout [Float]) {
        precondition(channels.indices.contains(channel), "HalfBandDecimator: no channel \(channel)")
        let total = (channels[channel].received + 1) / 2
        channels[channel].pending.append(contentsOf: repeatElement(0, count: Self.lookahead))
        drain(channel: channel, into: &output, limit: total)
        channels[channel] = ChannelState()
    }

    /// Ends every channel's stream, appending each tail to `output[c]`.
    public mutating func finish(into output: inout [[Float]]) {
        precondition(output.count == channelCount, "HalfBandDecimator: one array per channel")
        for channel in 0..<channelCount {
            finish(channel: channel, into: &output[channel])
        }
    }

    /// Emits outputs while their last input has arrived (and, at the end, up to `limit`).
    private mutating func drain(channel: Int, into output: inout [Float], limit: Int = .max) {
        let halfOrder = Self.halfOrder
        var state = channels[channel]
        channels[channel].pending = []   // keep `state.pending` uniquely referenced
        let available = state.first + state.pending.count   // inputs x[..< available] are known
        // Output j needs x[2j + 55], so j ≤ (available − 56)/2.
        var last = (available - 2 * halfOrder) / 2
        if available < 2 * halfOrder { last = -1 }
        last = min(last, limit - 1)
        if last >= state.next {
            output.reserveCapacity(output.count + last - state.next + 1)
            taps.withUnsafeBufferPointer { taps in
                state.pending.withUnsafeBufferPointer { x in
                    for j in state.next...last {
                        let centre = 2 * j - state.first
                        var sum = 0.5 * x[centre]
                        for m in 1...halfOrder {
                            sum += taps[m - 1] * (x[centre - (2 * m - 1)] + x[centre + (2 * m - 1)])
                        }
                        output.append(sum)
                    }
                }
            }
            state.next = last + 1
        }
        // Drop the inputs no later output needs (before 2·next − 55), in batches.
        let needed = 2 * state.next - Self.lookahead
        let dead = needed - state.first
        if dead >= 4096 {
            state.pending.removeFirst(dead)
            state.first = needed
        }
        channels[channel] = state
    }
}
