import ObjectStorage
import Testing

/// Which failures a store tries again (issue 40's transient failures) and which stop it.
@Suite struct ObjectStoreErrorTests {
    @Test func transientAndPermanentFailures() {
        for transient in [ObjectStoreError(.unreachable, "x"), ObjectStoreError(.timedOut, "x"), ObjectStoreError(.failed, "x"),
                          ObjectStoreError(.refused, "x", status: 503), ObjectStoreError(.refused, "x", status: 408),
                          ObjectStoreError(.refused, "x", status: 429),
                          ObjectStoreError(.refused, "x", status: 403, code: "RequestTimeTooSkewed"),
                          ObjectStoreError(.refused, "x", status: 400, code: "ExpiredToken")] {
            #expect(transient.isTransient, "\(transient.kind) \(transient.status ?? 0) \(transient.code ?? "")")
        }
        for permanent in [ObjectStoreError(.tls, "x"), ObjectStoreError(.credentials, "x"), ObjectStoreError(.address, "x"),
                          ObjectStoreError(.refused, "x", status: 403, code: "SignatureDoesNotMatch"),
                          ObjectStoreError(.refused, "x", status: 404, code: "NoSuchBucket"), ObjectStoreError(.refused, "x", status: 415)] {
            #expect(!permanent.isTransient, "\(permanent.kind) \(permanent.status ?? 0) \(permanent.code ?? "")")
        }
    }
}
