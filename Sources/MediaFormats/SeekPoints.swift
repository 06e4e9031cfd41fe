/// A bounded sample of the frames a file writer wrote, for the seek table it writes when it
/// finishes (an MP3 Info frame's, a FLAC SEEKTABLE): every `stride`th frame's first sample,
/// byte offset and length, the stride doubling whenever the sample fills, so that the memory held
/// does not grow with the file.
struct SeekPoints {
    /// One frame: its first sample, its offset from the first frame, its samples.
    struct Point {
        var sample: Int64
        var offset: Int64
        var samples: Int
    }

    private(set) var points: [Point] = []
    private var stride = 1
    private var seen = 0
    /// The most points held.
    static let capacity = 4096

    /// Notes the next frame.
    mutating func append(sample: Int64, offset: Int64, samples: Int) {
        defer { seen += 1 }
        guard seen % stride == 0 else { return }
        if points.count == Self.capacity {
            points = points.enumerated().compactMap { $0.offset % 2 == 0 ? $0.element : nil }
            stride *= 2
            guard seen % stride == 0 else { return }
        }
        points.append(Point(sample: sample, offset: offset, samples: samples))
    }

    /// The last point that starts at or before `sample`.
    func point(atOrBefore sample: Int64) -> Point? {
        var low = 0, high = points.count
        while low < high {
            let middle = (low + high) / 2
            if points[middle].sample <= sample { low = middle + 1 } else { high = middle }
        }
        return low > 0 ? points[low - 1] : nil
    }
}
