internal import CALSA
internal import MediaCore
public import SystemPackage
#if canImport(Glibc)
internal import Glibc
#endif

/// An in-process ALSA configuration tree (`snd_config_t`), for opening PCMs that are not in the
/// system's `asound.conf` without setting `ALSA_CONFIG_PATH`: the ALSA `file` plugin in tests,
/// or a `pulse` PCM on a machine without `/dev/snd`. (Core Audio has no counterpart.)
///
/// Definitions are parsed with `snd_config_load` into a private tree, which
/// ``PCMDevice`` passes to `snd_pcm_open_lconf`. Built-in plugin types (`file`, `null`, `hw`,
/// `plug`, …) need nothing else; to refer to the system's definitions (`default`, cards,
/// `pcm_type` plugins such as `pulse`), use ``init(systemConfigurationAnd:)``, which reads files
/// the way `ALSA_CONFIG_PATH` does, hooks (`alsa.conf.d`) included.
///
/// `Sendable` because it is immutable: the tree is built in `init` and only read after it
/// (`snd_pcm_open_lconf` does not modify it), and it is freed in `deinit`.
public final class ALSAConfiguration: @unchecked Sendable {
    // @unchecked: the tree is only read after init (snd_pcm_open_lconf does not modify it).
    let tree: OpaquePointer
    /// The file list's modification record, for a tree made by `snd_config_update_r`.
    private let update: OpaquePointer?

    /// The system configuration (`/usr/share/alsa/alsa.conf`, its hooks and the files they
    /// include, such as `alsa.conf.d/pulse.conf`), then each of `paths` (asound.conf syntax),
    /// read in that order as alsa-lib reads `ALSA_CONFIG_PATH`: a PCM defined in `paths` can be
    /// opened by name next to `default`, `pulse` and the cards.
    ///
    /// - Throws: ``ALSAError/invalidConfiguration(message:)`` naming the file list when a file is
    ///   missing or does not parse.
    public init(systemConfigurationAnd paths: [FilePath]) throws(ALSAError) {
        let files = paths.map(\.string)
        // alsa-lib skips a file of the list it cannot open; a configuration asked for by name
        // must exist.
        for file in files where access(file, R_OK) != 0 {
            throw .invalidConfiguration(message: "cannot read \(file): \(systemErrorWords(errno))")
        }
        let path = (["/usr/share/alsa/alsa.conf"] + files).joined(separator: ":")
        var top: OpaquePointer?
        var update: OpaquePointer?
        let code = snd_config_update_r(&top, &update, path)
        guard code >= 0, let top else {
            if let top { snd_config_delete(top) }
            if let update { snd_config_update_free(update) }
            throw .invalidConfiguration(message: "\(files.joined(separator: ", ")): \(ALSAError.message(for: code))")
        }
        self.tree = top
        self.update = update
    }

    /// A configuration holding only `text` (ALSA configuration syntax, as in `asound.conf`).
    public convenience init(_ text: String) throws(ALSAError) {
        try self.init(base: nil, text: text)
    }

    /// The system configuration (`/usr/share/alsa/alsa.conf` and what it includes), with `text`
    /// parsed after it so that its definitions can refer to, and override, the system's.
    public static func system(appending text: String = "") throws(ALSAError) -> ALSAConfiguration {
        try ALSAConfiguration(base: "/usr/share/alsa/alsa.conf", text: text)
    }

    private init(base path: String?, text: String) throws(ALSAError) {
        var top: OpaquePointer?
        var code = snd_config_top(&top)
        guard code >= 0, let top else {
            throw .invalidConfiguration(message: "snd_config_top: \(ALSAError.message(for: code))")
        }
        tree = top
        update = nil
        if let path {
            code = Self.load(top) { input in snd_input_stdio_open(&input, path, "r") }
            guard code >= 0 else {
                throw .invalidConfiguration(message: "\(path): \(ALSAError.message(for: code))")
            }
        }
        var bytes = Array(text.utf8)
        let count = bytes.count
        code = bytes.withUnsafeMutableBytes { buffer in
            Self.load(top) { input in
                snd_input_buffer_open(&input, buffer.baseAddress?.assumingMemoryBound(to: CChar.self), count)
            }
        }
        guard code >= 0 else {
            throw .invalidConfiguration(message: "\(ALSAError.message(for: code)) in: \(text)")
        }
    }

    deinit {
        snd_config_delete(tree)
        if let update { snd_config_update_free(update) }
    }

    /// Opens an input with `open` and loads it into `top`; returns the first negative code, or 0.
    private static func load(_ top: OpaquePointer, open: (inout OpaquePointer?) -> Int32) -> Int32 {
        var input: OpaquePointer?
        let opened = open(&input)
        guard opened >= 0, let input else { return opened < 0 ? opened : -EINVAL }
        defer { snd_input_close(input) }
        return snd_config_load(top, input)
    }
}
