// Packages an existing M4A (or ADTS) as HLS by stream copy, with a DASH manifest over the same
// segments, then validates the package: with MediaStreaming and MediaValidation alone, products that link no ALSA,
// libavcodec or libebur128 (a server that only packages and serves what exists).
//
//   package-hls INPUT.m4a OUTPUT_DIR
import MediaStreaming
import MediaValidation
import Glibc

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    print("usage: package-hls INPUT.m4a OUTPUT_DIR")
    exit(2)
}
do {
    let summary = try Packaging.hls(copying: FilePath(arguments[1]), to: FilePath(arguments[2]), options: .init(segmentDuration: 2, dash: true))
    print("\(summary.playlist): \(summary.segmentDurations.count) segments; \(summary.mpd.map { "\($0)" } ?? "")")
    let findings = FileValidation.reports(for: [FilePath(arguments[2])]).flatMap(\.findings)
    for finding in findings { print(finding) }
    exit(findings.contains { $0.severity == .error } ? 1 : 0)
} catch {
    print("package-hls: \(error)")
    exit(1)
}
