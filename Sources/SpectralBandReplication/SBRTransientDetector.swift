/// Finds onsets in the SBR range that one envelope per frame would smear (3GPP TS 26.404 §5.4
/// in spirit): an SBR time slot (two QMF slots) whose energy over the high band is well above
/// the mean of the slots before it.
///
/// One detector serves both channels of a pair (it is fed their sum), so they share a grid.
public struct SBRTransientDetector: Sendable {
    /// A slot is a transient when its energy exceeds this many times the recent mean (9 dB).
    public var ratio: Float = 8
    /// Slots quieter than this mean energy per subband and QMF slot (about −80 dBFS in the
    /// analysis scale) are never transients.
    public var floor: Float = 1_000
    /// The energies of the last SBR slots seen, newest last.
    private var recent: [Float] = []
    /// How many slots the mean looks back.
    private let memory = 16

    /// A detector with nothing seen.
    public init() {}

    /// Looks at the 16 SBR slot energies of one frame (in order) and returns the first slot
    /// (0..<16) that is a transient, or `nil`.
    public mutating func transient(in energies: [Float]) -> Int? {
        var found: Int?
        for (slot, energy) in energies.enumerated() {
            if found == nil, recent.count >= 4 {
                let mean = recent.reduce(0, +) / Float(recent.count)
                if energy > floor && energy > ratio * max(mean, floor / ratio) { found = slot }
            }
            recent.append(energy)
            if recent.count > memory { recent.removeFirst() }
        }
        return found
    }
}
