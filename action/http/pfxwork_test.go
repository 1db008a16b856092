package http

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"github.com/jobclock/scheduler/action"
)

// TestRC2Vectors checks the RC2 cipher against the test vectors of RFC
// 2268 section 5, both ways.
func TestRC2Vectors(t *testing.T) {
	tests := []struct {
		key       string
		bits      int
		plain     string
		encrypted string
	}{
		{"0000000000000000", 63, "0000000000000000", "ebb773f993278eff"},
		{"ffffffffffffffff", 64, "ffffffffffffffff", "278b27e42e2f0d49"},
		{"3000000000000000", 64, "1000000000000001", "30649edf9be7d2c2"},
		{"88", 64, "0000000000000000", "61a8a244adacccf0"},
		{"88bca90e90875a", 64, "0000000000000000", "6ccf4308974c267f"},
		{"88bca90e90875a7f0f79c384627bafb2", 64, "0000000000000000", "1a807d272bbe5db1"},
		{"88bca90e90875a7f0f79c384627bafb2", 128, "0000000000000000", "2269552ab0f85ca6"},
		{"88bca90e90875a7f0f79c384627bafb216f80a6f85920584c42fceb0be255daf1e", 129, "0000000000000000", "5b78d3a43dfff1f1"},
	}
	for _, tt := range tests {
		key, _ := hex.DecodeString(tt.key)
		plain, _ := hex.DecodeString(tt.plain)
		c := newRC2(key, tt.bits)
		got := make([]byte, 8)
		c.Encrypt(got, plain)
		if h := hex.EncodeToString(got); h != tt.encrypted {
			t.Errorf("RC2 key %s/%d: Encrypt(%s) = %s, want %s", tt.key, tt.bits, tt.plain, h, tt.encrypted)
		}
		enc, _ := hex.DecodeString(tt.encrypted)
		c.Decrypt(got, enc)
		if h := hex.EncodeToString(got); h != tt.plain {
			t.Errorf("RC2 key %s/%d: Decrypt(%s) = %s, want %s", tt.key, tt.bits, tt.encrypted, h, tt.plain)
		}
	}
}

func testCert(t testing.TB) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "work"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert, key
}

// TestPfxWorkOfEncoders opens files made by go-pkcs12's encoders, old and
// new: the check decrypts their contents (RC2, 3DES and AES with PBKDF2)
// and counts exactly the derivations they take.
func TestPfxWorkOfEncoders(t *testing.T) {
	cert, key := testCert(t)
	tests := []struct {
		name    string
		enc     *pkcs12.Encoder
		visible int64 // MAC, contents, keys outside contents
		full    int64 // visible plus the contents decrypted again
	}{
		// MAC 1 iteration; certificates RC2-40 (key and IV); key 3DES
		// (two key blocks and an IV), 2,048 iterations each.
		{"LegacyRC2", pkcs12.LegacyRC2, 1 + 2*2048 + 3*2048, 1 + 2*2*2048 + 3*2048},
		{"LegacyDES", pkcs12.LegacyDES, 1 + 3*2048 + 3*2048, 1 + 2*3*2048 + 3*2048},
		// MAC 2,048; certificates and key AES-256 with PBKDF2-SHA256 (one
		// block each).
		{"Modern2023", pkcs12.Modern2023, 3 * 2048, 4 * 2048},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, pw := range []string{"pässword", ""} {
				data, err := tt.enc.Encode(key, cert, nil, pw)
				if err != nil {
					t.Fatal(err)
				}
				p, err := parsePFX(data)
				if err != nil {
					t.Fatal(err)
				}
				empty := pw == ""
				b, err := p.visibleWork(empty)
				if err != nil {
					t.Fatal(err)
				}
				wantVisible, wantFull := tt.visible, tt.full
				if empty {
					// The MAC is counted twice, the contents are tried
					// with both spellings of an empty password.
					mac := int64(p.pfx.MacData.Iterations)
					contents := tt.full - tt.visible
					wantVisible += mac
					wantFull += mac + contents
				}
				if b.spent != wantVisible {
					t.Errorf("password %q: visible work = %d, want %d", pw, b.spent, wantVisible)
				}
				full, err := pfxWork(data, pw)
				if err != nil {
					t.Fatalf("password %q: checkPfxWork: %v", pw, err)
				}
				if full != wantFull {
					t.Errorf("password %q: full work = %d, want %d", pw, full, wantFull)
				}
				if _, err := parsePfx(base64.StdEncoding.EncodeToString(data), pw); err != nil {
					t.Errorf("password %q: parsePfx: %v", pw, err)
				}
			}
		})
	}
}

func TestPfxWrongPasswordOpensNoContent(t *testing.T) {
	cert, key := testCert(t)
	for _, enc := range []*pkcs12.Encoder{pkcs12.LegacyRC2, pkcs12.LegacyDES, pkcs12.Modern2023} {
		data, err := enc.Encode(key, cert, nil, "right")
		if err != nil {
			t.Fatal(err)
		}
		var fe *FieldError
		if err := checkPfxWork(data, "wrong"); !errors.As(err, &fe) || fe.Path != "request.authentication.password" {
			t.Errorf("checkPfxWork with a wrong password = %v, want a FieldError on the password", err)
		}
	}
}

// craft builds a PKCS#12 file by hand: one content (encrypted with PBES2
// and contentIterations when encrypt is set) holding a certificate bag and
// a key bag encrypted with keyIterations, with a PBMAC1 MAC of
// macIterations. go-pkcs12 opens such files; the check must refuse the
// ones that ask for too much before any key is derived.
func craft(t testing.TB, password string, encrypt bool, contentIterations, keyIterations, macIterations int) []byte {
	t.Helper()
	cert, key := testCert(t)
	pk8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyAlg, keyData := pbes2Encrypt(t, pk8, password, keyIterations)
	keyBag := mustMarshal(t, p12EncryptedKey{Algorithm: keyAlg, Data: keyData})
	certBag := mustMarshal(t, struct {
		ID   asn1.ObjectIdentifier
		Data []byte `asn1:"tag:0,explicit"`
	}{asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 22, 1}, cert.Raw})
	bags := mustMarshal(t, []p12SafeBag{
		{ID: asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 3}, Value: asn1.RawValue{FullBytes: explicit0(t, certBag)}},
		{ID: oidShroudedKey, Value: asn1.RawValue{FullBytes: explicit0(t, keyBag)}},
	})
	var content p12ContentInfo
	if encrypt {
		alg, enc := pbes2Encrypt(t, bags, password, contentIterations)
		ed := mustMarshal(t, p12EncryptedData{Info: p12EncryptedContentInfo{ContentType: oidData, Algorithm: alg, Content: enc}})
		content = p12ContentInfo{ContentType: oidEncryptedData, Content: asn1.RawValue{FullBytes: explicit0(t, ed)}}
	} else {
		content = p12ContentInfo{ContentType: oidData, Content: asn1.RawValue{FullBytes: explicit0(t, mustMarshal(t, bags))}}
	}
	safe := mustMarshal(t, []p12ContentInfo{content})
	salt := []byte("salt-for-the-mac")
	params := mustMarshal(t, p12PBMAC1Params{
		KDF: pkix.AlgorithmIdentifier{Algorithm: oidPBKDF2, Parameters: asn1.RawValue{FullBytes: mustMarshal(t, p12PBKDF2Params{
			Salt: asn1.RawValue{Tag: asn1.TagOctetString, Bytes: salt}, Iterations: macIterations, KeyLength: 32,
			PRF: pkix.AlgorithmIdentifier{Algorithm: oidHMACSHA256, Parameters: asn1.NullRawValue}})}},
		MacAlg: pkix.AlgorithmIdentifier{Algorithm: oidHMACSHA256, Parameters: asn1.NullRawValue},
	})
	var mac []byte
	if macIterations <= 100_000 { // a forged MAC is as good for the check
		k, err := pbkdf2.Key(sha256.New, password, salt, macIterations, 32)
		if err != nil {
			t.Fatal(err)
		}
		h := hmac.New(sha256.New, k)
		h.Write(safe)
		mac = h.Sum(nil)
	} else {
		mac = make([]byte, 32)
	}
	return mustMarshal(t, p12PFX{
		Version:  3,
		AuthSafe: p12ContentInfo{ContentType: oidData, Content: asn1.RawValue{FullBytes: explicit0(t, mustMarshal(t, safe))}},
		MacData: p12MacData{Mac: p12DigestInfo{Algorithm: pkix.AlgorithmIdentifier{Algorithm: oidPBMAC1, Parameters: asn1.RawValue{FullBytes: params}}, Digest: mac},
			MacSalt: []byte("ignored"), Iterations: 1},
	})
}

func pbes2Encrypt(t testing.TB, plain []byte, password string, iterations int) (pkix.AlgorithmIdentifier, []byte) {
	t.Helper()
	salt := []byte("0123456789abcdef")
	iv := []byte("fedcba9876543210")
	kdf := mustMarshal(t, p12PBKDF2Params{Salt: asn1.RawValue{Tag: asn1.TagOctetString, Bytes: salt}, Iterations: iterations,
		PRF: pkix.AlgorithmIdentifier{Algorithm: oidHMACSHA256, Parameters: asn1.NullRawValue}})
	params := mustMarshal(t, p12PBES2Params{
		KDF:    pkix.AlgorithmIdentifier{Algorithm: oidPBKDF2, Parameters: asn1.RawValue{FullBytes: kdf}},
		Scheme: pkix.AlgorithmIdentifier{Algorithm: oidAES256CBC, Parameters: asn1.RawValue{FullBytes: mustMarshal(t, iv)}},
	})
	alg := pkix.AlgorithmIdentifier{Algorithm: oidPBES2, Parameters: asn1.RawValue{FullBytes: params}}
	var enc []byte
	if iterations <= 100_000 {
		k, err := pbkdf2.Key(sha256.New, password, salt, iterations, 32)
		if err != nil {
			t.Fatal(err)
		}
		block, _ := aes.NewCipher(k)
		pad := 16 - len(plain)%16
		padded := append(bytes.Clone(plain), bytes.Repeat([]byte{byte(pad)}, pad)...)
		enc = make([]byte, len(padded))
		cipher.NewCBCEncrypter(block, iv).CryptBlocks(enc, padded)
	} else {
		enc = make([]byte, 16*((len(plain)+16)/16)) // never opened
	}
	return alg, enc
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := asn1.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// explicit0 wraps der in an explicit [0] tag.
func explicit0(t testing.TB, der []byte) []byte {
	return mustMarshal(t, asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: der})
}

func TestCraftedPfxOpens(t *testing.T) {
	for _, encrypt := range []bool{false, true} {
		data := craft(t, "pw", encrypt, 1000, 1000, 1000)
		if _, _, _, err := pkcs12.DecodeChain(data, "pw"); err != nil {
			t.Fatalf("go-pkcs12 refuses the crafted file (encrypted %v): %v", encrypt, err)
		}
		c, err := ReadCertificate(base64.StdEncoding.EncodeToString(data), "pw")
		if err != nil || c.SubjectName != "CN=work" {
			t.Fatalf("ReadCertificate of the crafted file (encrypted %v) = %+v, %v", encrypt, c, err)
		}
	}
}

// TestPfxOverLimitRefused: files asking for billions of iterations, in the
// MAC, a content, a visible key or a key inside an encrypted content, are
// refused before any derivation (else these tests would run for hours).
func TestPfxOverLimitRefused(t *testing.T) {
	const huge = min(4_000_000_000, math.MaxInt)
	tests := []struct {
		name         string
		data         []byte
		seenAtCreate bool // without the password
	}{
		{"mac", craft(t, "pw", false, 1000, 1000, huge), true},
		{"content", craft(t, "pw", true, huge, 1000, 1000), true},
		{"visible key", craft(t, "pw", false, 1000, huge, 1000), true},
		{"key inside an encrypted content", craft(t, "pw", true, 1000, huge, 1000), false},
		{"sum of parts", craft(t, "pw", false, 1000, MaxPfxIterations/2+1, MaxPfxIterations/2+1), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pfx := base64.StdEncoding.EncodeToString(tt.data)
			var fe *FieldError
			_, err := ReadCertificate(pfx, "pw")
			if !errors.As(err, &fe) || fe.Path != "request.authentication.pfx" || !strings.Contains(fe.Reason, "at most 1000000") {
				t.Errorf("ReadCertificate = %v, want a FieldError on the pfx naming the limit", err)
			}
			err = CheckPfxWork(pfx)
			switch {
			case tt.seenAtCreate && !errors.As(err, &fe):
				t.Errorf("CheckPfxWork = %v, want a FieldError", err)
			case !tt.seenAtCreate && err != nil:
				t.Errorf("CheckPfxWork = %v, want nil (the key is behind the password)", err)
			}
		})
	}
}

// TestPfxOverLimitAtRunTime: an attempt with such a certificate fails
// before connecting, saying why.
func TestPfxOverLimitAtRunTime(t *testing.T) {
	e := New(nil)
	defer e.Close()
	pfx := base64.StdEncoding.EncodeToString(craft(t, "pw", true, 1000, min(4_000_000_000, math.MaxInt), 1000))
	req := &action.Request{Action: &action.Action{Type: action.HTTPS, Request: &action.HTTPRequest{
		URI: "https://127.0.0.1:1/", Method: "GET",
		Authentication: &action.Authentication{Type: action.AuthClientCertificate, Pfx: pfx, Password: "pw"}}}}
	res, err := e.Execute(context.Background(), req)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Path != "request.authentication.pfx" {
		t.Fatalf("Execute = %v, want a FieldError on the pfx", err)
	}
	if want := "request.authentication.pfx: asks for more than 1000000 key-derivation iterations"; !strings.Contains(res.Message, want) {
		t.Errorf("message = %q, want it to contain %q", res.Message, want)
	}
}

func TestPfxJustUnderLimitOpens(t *testing.T) {
	// MAC 1,000 + content twice 1,000 + key: just within the limit.
	data := craft(t, "pw", true, 1000, MaxPfxIterations-3000, 1000)
	if n, err := pfxWork(data, "pw"); err != nil || n != MaxPfxIterations {
		t.Fatalf("pfxWork = %d, %v; want %d, nil", n, err, MaxPfxIterations)
	}
}

func TestCheckPfxWorkIgnoresWhatItCannotRead(t *testing.T) {
	for _, pfx := range []string{"", "AAEC", "not base64!", base64.StdEncoding.EncodeToString([]byte("not asn.1"))} {
		if err := CheckPfxWork(pfx); err != nil {
			t.Errorf("CheckPfxWork(%q) = %v, want nil (reported when the pfx is opened)", pfx, err)
		}
	}
}

func BenchmarkPfxIterations(b *testing.B) {
	b.Run("PBKDF2-SHA256", func(b *testing.B) {
		for b.Loop() {
			pbkdf2.Key(sha256.New, "password", []byte("salt"), 100_000, 32)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100_000, "ns/iteration")
	})
	b.Run("PKCS12-SHA1", func(b *testing.B) {
		for b.Loop() {
			pkcs12KDF([]byte("p\x00\x00"), []byte("salt"), 100_000, 1, 20)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100_000, "ns/iteration")
	})
}
