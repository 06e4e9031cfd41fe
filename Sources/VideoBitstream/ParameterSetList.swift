/// The parameter sets a stream has carried, in order of first appearance, one per kind and id:
/// a set that comes again with the same bytes changes nothing; with other bytes it replaces the
/// old one where it stood. ``version`` counts the changes, so that a format built from the list
/// is rebuilt only when it changed.
struct ParameterSetList {
    private var entries: [(kind: Int, id: Int, bytes: [UInt8])] = []
    /// Incremented on every change.
    private(set) var version = 0

    /// Records set `id` of `kind` (kinds order the output: VPS 0, SPS 1, PPS 2).
    mutating func record(kind: Int, id: Int, bytes: [UInt8]) {
        if let index = entries.firstIndex(where: { $0.kind == kind && $0.id == id }) {
            guard entries[index].bytes != bytes else { return }
            entries[index].bytes = bytes
        } else {
            entries.append((kind, id, bytes))
        }
        version += 1
    }

    /// The sets of `kind`, in order of first appearance.
    func units(of kind: Int) -> [[UInt8]] {
        entries.filter { $0.kind == kind }.map(\.bytes)
    }

    /// Every set, by kind (VPS, SPS, PPS), each kind in order of first appearance.
    var allUnits: [[UInt8]] {
        entries.map(\.kind).reduce(into: Set<Int>()) { $0.insert($1) }.sorted().flatMap { units(of: $0) }
    }
}
