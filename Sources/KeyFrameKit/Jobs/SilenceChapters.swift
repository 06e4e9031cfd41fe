public import SystemPackage
internal import RealModule

/// Chapters proposed at long silences (as m4b-tool users split audiobooks): the audio decoded,
/// mixed to mono as floats, measured in windows of 20 ms; a run of windows whose RMS stays below
/// a threshold for at least a minimum length is a silence, and a chapter starts where the sound
/// comes back. The first chapter starts at 0.
public enum SilenceChapters {
    /// A silence found: where it starts and ends, in seconds.
    public struct Silence: Sendable, Hashable {
        /// Seconds from the start.
        public var start: Double
        /// Seconds from the start.
        public var end: Double
    }

    /// The silences of at least `minimumSeconds` in the audio at `path`, quieter than
    /// `thresholdDBFS` (RMS over 20 ms; −50 dBFS by default), in order. One that runs to the
    /// end is kept too.
    ///
    /// - Throws: the input's errors (``AudioFileInput``).
    public static func silences(in path: FilePath, minimumSeconds: Double, thresholdDBFS: Double = -50,
                                formats: MediaFormatRegistry = .standard) throws(PipelineError) -> [Silence] {
        let input = try AudioFileInput(path: path, registry: formats)
        var source = input.transformed(by: PCMResampler(channelCount: 1, sampleFormat: .float32))
        let threshold = Double.pow(10, thresholdDBFS / 20)
        var silences: [Silence] = []
        var rate = 0
        var window = 1
        var sum = 0.0
        var count = 0
        var position = 0
        var quietSince: Int?
        func close(at end: Int) {
            if let start = quietSince, Double(end - start) >= minimumSeconds * Double(rate) {
                silences.append(Silence(start: Double(start) / Double(rate), end: Double(end) / Double(rate)))
            }
            quietSince = nil
        }
        while let buffer = try source.next() {
            if rate == 0 {
                rate = max(1, buffer.format.sampleRate)
                window = max(1, rate / 50)
            }
            buffer.bytes.withUnsafeBytes { raw in
                for sample in raw.bindMemory(to: Float.self) {
                    sum += Double(sample) * Double(sample)
                    count += 1
                    if count == window {
                        let quiet = (sum / Double(count)).squareRoot() < threshold
                        if quiet, quietSince == nil { quietSince = position }
                        if !quiet { close(at: position) }
                        position += count
                        sum = 0
                        count = 0
                    }
                }
            }
        }
        close(at: position + count)
        return silences
    }

    /// The chapter starts `silences` propose: 0, then each silence's end but one that runs to
    /// `duration`'s end (nothing follows it).
    public static func chapterStarts(_ silences: [Silence], duration: Double) -> [Double] {
        [0] + silences.filter { $0.end < duration - 0.001 && $0.end > 0 }.map(\.end)
    }
}
