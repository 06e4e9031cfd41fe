// Splits an M4A in two, titles each part, and joins the parts back into an audiobook (.m4b)
// with a chapter per part: no packet is decoded or encoded, and every edit is exact to the
// sample (the edit lists skip each part's priming and padding).
//
//   edit-m4a INPUT.m4a SECONDS OUTPUT.m4b
import KeyFrameKit
import Glibc

let arguments = CommandLine.arguments
guard arguments.count == 4, let seconds = Double(arguments[2]) else {
    print("usage: edit-m4a INPUT.m4a SECONDS OUTPUT.m4b")
    exit(2)
}
let input = FilePath(arguments[1])
let output = FilePath(arguments[3])
let partsDirectory = FilePath(arguments[3] + ".parts")

do {
    // 1. Split: two M4As, cut at SECONDS. Each keeps the packet before its first sample (the
    //    decoder's pre-roll) and says with its edit list which samples it presents.
    guard mkdir(partsDirectory.string, 0o755) == 0 || errno == EEXIST else {
        print("edit-m4a: cannot make \(partsDirectory)")
        exit(1)
    }
    let parts = try AudioEditing.split(input, into: partsDirectory, at: .positions([.seconds(seconds)]))

    // 2. Tag: each part's title, written into the padding every M4A KeyFrameKit writes leaves
    //    after its movie box (in place: only the movie's size and its tags change on disk).
    for (number, part) in parts.enumerated() {
        let summary = try Tagging.write({ items in
            items.set("©nam", type: 1, values: [Array("Part \(number + 1)".utf8)])
        }, to: part.output)
        print("\(part.output): \(part.samples) samples, titled \(summary.inPlace ? "in place" : "by a rewrite")")
    }

    // 3. Join: one track, an edit per part, a chapter per part named by its title tag.
    let joined = try AudioEditing.join(parts.map(\.output), to: output)
    print("\(output): \(joined.samples) samples at \(joined.sampleRate) Hz")
    for chapter in try Tagging.readChapters(output) {
        print("  chapter at \(chapter.seconds) s: \(chapter.title)")
    }
    for part in parts { unlink(part.output.string) }
    rmdir(partsDirectory.string)
} catch {
    print("edit-m4a: \(error)")
    exit(1)
}
