import ObjectStorage
import Testing

/// AWS Signature Version 4 as S3 signs it, against AWS's own example (the S3 API reference's
/// "GET Object" with a range) and vectors made with botocore's `S3SigV4Auth` (PyPI botocore;
/// the canonical request, the string to sign and the signature printed as it signed).
@Suite struct SignatureV4Tests {
    static let documented = S3Credentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    static let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    @Test func awsDocumentedGetObject() {
        let signer = SignatureV4(credentials: Self.documented, region: "us-east-1")
        let timestamp = SignatureV4.timestamp(secondsSince1970: 1_369_353_600)
        #expect(timestamp == "20130524T000000Z")
        #expect(SignatureV4.payloadHash([]) == Self.emptyHash)
        let request = SignatureV4.Request(method: "GET", path: "/test.txt",
                                          headers: [("Host", "examplebucket.s3.amazonaws.com"), ("Range", "bytes=0-9")], payloadHash: Self.emptyHash)
        let signed = signer.signed(request, timestamp: timestamp)
        #expect(signed.last?.value == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    /// botocore's PUT of a key with a space, a `+` and parentheses, path-style, with its
    /// Content-Type and Cache-Control signed and the payload hashed.
    @Test func botocorePutWithEncodedKey() {
        let signer = SignatureV4(credentials: Self.documented, region: "us-east-1")
        let timestamp = SignatureV4.timestamp(secondsSince1970: 1_704_164_645)
        #expect(timestamp == "20240102T030405Z")
        let hash = SignatureV4.payloadHash(Array("hello world".utf8))
        var request = SignatureV4.Request(method: "PUT", path: "/audio-bucket/my folder/track +1 (final).wav",
                                          headers: [("Content-Type", "audio/wav"), ("Cache-Control", "public, max-age=3600"),
                                                    ("Host", "127.0.0.1:9000")], payloadHash: hash)
        request.headers += [("x-amz-date", timestamp), ("x-amz-content-sha256", hash)]
        #expect(signer.canonicalRequest(request) == """
            PUT
            /audio-bucket/my%20folder/track%20%2B1%20%28final%29.wav

            cache-control:public, max-age=3600
            content-type:audio/wav
            host:127.0.0.1:9000
            x-amz-content-sha256:b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9
            x-amz-date:20240102T030405Z

            cache-control;content-type;host;x-amz-content-sha256;x-amz-date
            b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9
            """)
        #expect(signer.stringToSign(request, timestamp: timestamp).hasSuffix("b081303065bc7089f4d7dfd5c2786811ebe6a9f223a1aefb8a220766152448bb"))
        #expect(signer.signature(request, timestamp: timestamp) == "d88fd27699a4846006033f21c5ccd8820ae55d2b8e1721a4f7d05e1ca22a3726")

        // The same with a session token, which is signed.
        var temporary = signer
        temporary.credentials = S3Credentials(accessKeyID: "ASIAIOSFODNN7EXAMPLE", secretAccessKey: Self.documented.secretAccessKey,
                                              sessionToken: "FQoGZXIvYXdzEXAMPLETOKEN+/=")
        request.headers.removeLast(2)
        let signed = temporary.signed(request, timestamp: timestamp)
        #expect(signed.contains { $0.name == "x-amz-security-token" && $0.value == "FQoGZXIvYXdzEXAMPLETOKEN+/=" })
        #expect(signed.last?.value == "AWS4-HMAC-SHA256 Credential=ASIAIOSFODNN7EXAMPLE/20240102/us-east-1/s3/aws4_request, "
            + "SignedHeaders=cache-control;content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, "
            + "Signature=66071fc831c37bab170581031146138fcc40037767850c52c71f6407aef8729b")
    }

    /// botocore's UploadPart (query given unsorted, an unsigned payload) and
    /// CreateMultipartUpload (`?uploads`, a name without a value).
    @Test func botocoreMultipartQueries() {
        let signer = SignatureV4(credentials: Self.documented, region: "us-east-1")
        let timestamp = "20240102T030405Z"
        let part = SignatureV4.Request(method: "PUT", path: "/audio-bucket/big.wav", query: [("uploadId", "abc123"), ("partNumber", "1")],
                                       headers: [("Host", "127.0.0.1:9000")], payloadHash: "UNSIGNED-PAYLOAD")
        #expect(SignatureV4.canonicalQuery(part.query) == "partNumber=1&uploadId=abc123")
        #expect(signer.signed(part, timestamp: timestamp).last?.value.hasSuffix(
            "Signature=4532ffdcf005895574cf4a323621bf335587e740c85fb08ea94b1264dc704725") == true)
        let create = SignatureV4.Request(method: "POST", path: "/audio-bucket/big.wav", query: [("uploads", "")],
                                         headers: [("Content-Type", "audio/wav"), ("Host", "127.0.0.1:9000")], payloadHash: Self.emptyHash)
        #expect(SignatureV4.canonicalQuery(create.query) == "uploads=")
        #expect(signer.signed(create, timestamp: timestamp).last?.value.hasSuffix(
            "Signature=117cfaa83d5cd1068c94be3a841a89e0de223b2933ac03de2170a48acfe386d4") == true)
    }

    @Test func credentialsComeFromTheEnvironmentThenTheProfile() throws {
        let files = ["/home/u/.aws/credentials": "[default]\naws_access_key_id = AKIDFILE\naws_secret_access_key = secretfile\n\n[radio]\naws_access_key_id=AKIDRADIO\naws_secret_access_key=secretradio\naws_session_token = tok\n",
                     "/home/u/.aws/config": "[default]\nregion = eu-west-1\n[profile radio]\nregion = eu-central-1\n"]
        let read = { (path: String) in files[path] }
        var environment = ["HOME": "/home/u"]
        var found = try S3Credentials.resolve(environment: { environment[$0] }, readFile: read)
        #expect(found.credentials.accessKeyID == "AKIDFILE" && found.region == "eu-west-1")
        found = try S3Credentials.resolve(profile: "radio", environment: { environment[$0] }, readFile: read)
        #expect(found.credentials.accessKeyID == "AKIDRADIO" && found.credentials.sessionToken == "tok" && found.region == "eu-central-1")
        environment["AWS_ACCESS_KEY_ID"] = "AKIDENV"
        environment["AWS_SECRET_ACCESS_KEY"] = "secretenv"
        environment["AWS_REGION"] = "us-west-2"
        found = try S3Credentials.resolve(environment: { environment[$0] }, readFile: read)
        #expect(found.credentials.accessKeyID == "AKIDENV" && found.region == "us-west-2")
        #expect("\(found.credentials)" == "AKIDENV:****")
        let error = #expect(throws: ObjectStoreError.self) { try S3Credentials.resolve(environment: { _ in nil }, readFile: { _ in nil }) }
        #expect(error?.kind == .credentials)
    }

    @Test func serverTimesInS3sExtendedForm() {
        #expect(SignatureV4.seconds(iso8601: "2013-05-24T00:00:00Z") == 1_369_353_600)
        #expect(SignatureV4.seconds(iso8601: "2026-12-01T11:30:05.123Z") == 1_796_124_605)
        #expect(SignatureV4.timestamp(secondsSince1970: SignatureV4.seconds(iso8601: "2026-12-01T11:30:05Z") ?? 0) == "20261201T113005Z")
        for text in ["20130524T000000Z", "2013-05-24T00:00:00", "2013-05-24T00:00:00+01:00", "2013-13-24T00:00:00Z", "2013-05-24T00:00:00.Z", ""] {
            #expect(SignatureV4.seconds(iso8601: text) == nil, "\(text)")
        }
    }

    @Test func s3URLsAndEndpoints() throws {
        let store = try S3Store(url: "s3://shows/2026/ep%201", endpoint: "http://127.0.0.1:8333", credentials: Self.documented, region: nil)
        #expect(store.bucket == "shows" && store.prefix == "2026/ep 1" && store.pathStyle && store.endpoint == "http://127.0.0.1:8333")
        #expect(!store.description.contains(Self.documented.secretAccessKey))
        let aws = try S3Store(url: "s3://shows", credentials: Self.documented, region: "eu-west-1")
        #expect(!aws.pathStyle && aws.endpoint == "https://shows.s3.eu-west-1.amazonaws.com" && aws.prefix.isEmpty)
        for bad in ["s3://UPPER/x", "s3://ab", "s3://user@bucket/x", "s3://bucket:9000/x", "s3://bucket/x?y=1", "s3://bucket/../x", "http://bucket/x"] {
            #expect(throws: ObjectStoreError.self, "\(bad)") { try S3Store(url: bad, credentials: Self.documented, region: nil) }
        }
        #expect(throws: ObjectStoreError.self) { try S3Store(url: "s3://shows", endpoint: "ftp://host", credentials: Self.documented, region: nil) }
    }
}
