public import MediaCore

extension MP4File {
    /// The damage the reader stepped over (``damage``, each track's ``MP4Track/damage``, and
    /// an audio track's samples of no bytes, ``MP4Track/emptyAudioSamples``) as `keyframe validate` findings, errors all: a player plays through
    /// it, but a writer should not have made it. The location is the byte offset where known;
    /// with `range`, only the damage at offsets inside it (and where no offset is known).
    public func damageFindings(name: String, within range: Range<Int64>? = nil) -> [ValidationFinding] {
        var findings = damage.filter { event in range.map { range in event.offset.map { range.contains($0) } ?? true } ?? true }.map { event in
            ValidationFinding(.error, file: name, location: event.offset.map { "byte \($0)" } ?? "the file", rule: "damage a reader steps over",
                              expected: "a well-formed file", found: event.message)
        }
        for (index, track) in tracks.enumerated() {
            // The reader records a broken track's damage in the file's too (the same kind, at the
            // same offset): said once.
            guard let event = track.damage, !damage.contains(where: { $0.kind == event.kind && $0.offset == event.offset }) else { continue }
            findings.append(ValidationFinding(.error, file: name, location: "moov/trak[\(index + 1)]", rule: "damage a reader steps over",
                                              expected: "a track that can be read", found: event.message))
        }
        for (index, track) in tracks.enumerated() where range == nil {
            guard let event = track.emptyAudioSamples else { continue }
            findings.append(ValidationFinding(.error, file: name, location: "moov/trak[\(index + 1)]", rule: "damage a reader steps over",
                                              expected: "audio samples of one byte or more", found: event.message))
        }
        return findings
    }
}
