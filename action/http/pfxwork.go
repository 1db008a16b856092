package http

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"hash"
	"math"
	"unicode/utf16"
)

// MaxPfxIterations is the most key-derivation iterations a client
// certificate's PKCS#12 file may ask for, counted over every derivation
// that opening it takes: its MAC, its encrypted contents (which jobclock
// decrypts twice: once to check what they hold, once to read them) and its
// encrypted private key, each counted once per hash block it derives.
// Files written by OpenSSL, Windows, Java, .NET or go-pkcs12 ask for 2,000
// to 10,000 iterations per derivation, 10,000 to 60,000 in all; the count
// is chosen by whoever makes the file, though, and a crafted one asking
// for billions would keep a CPU busy for minutes. An iteration costs 160
// to 280 ns on a 2-core test machine (PKCS#12 SHA-1, PBKDF2-SHA256), so
// the limit bounds opening a file to about a quarter of a second of one
// core. A file over the limit is
// refused with a *FieldError naming request.authentication.pfx, when the
// job is created (for the parts readable without the password: see
// CheckPfxWork) and before any key is derived when it is opened.
const MaxPfxIterations = 1_000_000

// The object identifiers of the PKCS#12 parts whose cost is counted.
var (
	oidData          = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidEncryptedData = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 6}
	oidShroudedKey   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 2}

	oidPBE3DES   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1, 3}
	oidPBERC2128 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1, 5}
	oidPBERC240  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1, 6}
	oidPBES2     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidPBMAC1    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 14}

	oidHMACSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}
	oidSHA1       = asn1.ObjectIdentifier{1, 3, 14, 3, 2, 26}
	oidSHA256     = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 1}
	oidSHA512     = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 3}
	oidAES128CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
)

// The PKCS#12 structures (RFC 7292), as far as counting needs them.
type (
	p12PFX struct {
		Version  int
		AuthSafe p12ContentInfo
		MacData  p12MacData `asn1:"optional"`
	}
	p12ContentInfo struct {
		ContentType asn1.ObjectIdentifier
		Content     asn1.RawValue `asn1:"tag:0,explicit,optional"`
	}
	p12MacData struct {
		Mac        p12DigestInfo
		MacSalt    []byte
		Iterations int `asn1:"optional,default:1"`
	}
	p12DigestInfo struct {
		Algorithm pkix.AlgorithmIdentifier
		Digest    []byte
	}
	p12EncryptedData struct {
		Version int
		Info    p12EncryptedContentInfo
	}
	p12EncryptedContentInfo struct {
		ContentType asn1.ObjectIdentifier
		Algorithm   pkix.AlgorithmIdentifier
		Content     []byte `asn1:"tag:0,optional"`
	}
	p12SafeBag struct {
		ID         asn1.ObjectIdentifier
		Value      asn1.RawValue `asn1:"tag:0,explicit"`
		Attributes asn1.RawValue `asn1:"optional"`
	}
	p12EncryptedKey struct {
		Algorithm pkix.AlgorithmIdentifier
		Data      []byte
	}
	p12PBEParams struct {
		Salt       []byte
		Iterations int
	}
	p12PBES2Params struct {
		KDF    pkix.AlgorithmIdentifier
		Scheme pkix.AlgorithmIdentifier
	}
	p12PBKDF2Params struct {
		Salt       asn1.RawValue
		Iterations int
		KeyLength  int                      `asn1:"optional"`
		PRF        pkix.AlgorithmIdentifier `asn1:"optional"`
	}
	p12PBMAC1Params struct {
		KDF    pkix.AlgorithmIdentifier
		MacAlg pkix.AlgorithmIdentifier
	}
)

// errPfxUnreadable marks data that the counting cannot follow: it is left
// to the decoder, which refuses it before deriving any key.
var errPfxUnreadable = errors.New("not readable")

// pfxBudget adds up derivation work against MaxPfxIterations.
type pfxBudget struct {
	spent int64
}

// spend adds iterations × blocks; it returns a *FieldError once the total
// is over the limit. Iteration counts below 1 count as 1, as decoders run
// them.
func (b *pfxBudget) spend(iterations, blocks int) error {
	n := int64(max(iterations, 1))
	if n > MaxPfxIterations {
		b.spent = math.MaxInt64
	} else {
		b.spent = min(b.spent+n*int64(blocks), math.MaxInt64/2)
	}
	if b.spent <= MaxPfxIterations {
		return nil
	}
	what := fmt.Sprintf("%d", b.spent)
	if b.spent >= math.MaxInt64/2 {
		what = fmt.Sprintf("more than %d", int64(MaxPfxIterations))
	}
	return &FieldError{Path: "request.authentication.pfx", Reason: fmt.Sprintf(
		"asks for %s key-derivation iterations; at most %d are allowed (export the certificate with fewer iterations)",
		what, int64(MaxPfxIterations))}
}

// CheckPfxWork reports a *FieldError naming request.authentication.pfx
// when the PKCS#12 file in pfx (base64, as in the "pfx" field) asks for
// more than MaxPfxIterations key-derivation iterations in the parts that
// can be read without its password: the MAC, the encryption of its
// contents and its encrypted private key when that is not inside an
// encrypted content. It derives no key, so it is cheap. Data that is not
// base64 or not a PKCS#12 file gives no error here; ValidateRequest and
// Execute report it.
func CheckPfxWork(pfx string) error {
	data, err := decodeBase64(pfx)
	if err != nil {
		return nil
	}
	p, err := parsePFX(data)
	if err != nil {
		return nil
	}
	_, err = p.visibleWork(false)
	return err
}

// checkPfxWork makes sure that decoding data with password stays within
// MaxPfxIterations, before anything is derived: it counts what can be read
// without the password, then decrypts the encrypted contents (counting
// that too) to count the encrypted keys inside them. It returns nil for
// data it cannot follow, which the decoder refuses before deriving a key.
func checkPfxWork(data []byte, password string) error {
	_, err := pfxWork(data, password)
	return err
}

// pfxWork is checkPfxWork that also returns the iterations counted.
func pfxWork(data []byte, password string) (int64, error) {
	p, err := parsePFX(data)
	if err != nil {
		return 0, nil
	}
	emptyPassword := password == ""
	b, err := p.visibleWork(emptyPassword)
	if err != nil {
		return 0, err
	}
	// The passwords a decoder may use: the BMPString, and for an empty
	// password also no bytes at all (decoders retry with that).
	bmp, ok := bmpPassword(password)
	if !ok {
		return b.spent, nil // the decoder refuses the password as it is
	}
	passwords := [][]byte{bmp}
	if emptyPassword {
		passwords = append(passwords, nil)
	}
	for _, ci := range p.contents {
		if !ci.ContentType.Equal(oidEncryptedData) {
			continue
		}
		var ed p12EncryptedData
		if err := unmarshalAll(ci.Content.Bytes, &ed); err != nil {
			return b.spent, nil
		}
		opened := false
		for _, pw := range passwords {
			if err := b.spend(algorithmWork(ed.Info.Algorithm)); err != nil {
				return b.spent, err
			}
			plain, err := pbeDecrypt(ed.Info.Algorithm, ed.Info.Content, pw)
			if err != nil {
				continue
			}
			bags, err := parseBags(plain)
			if err != nil {
				continue
			}
			opened = true
			if err := bagsWork(b, bags); err != nil {
				return b.spent, err
			}
		}
		if !opened {
			return b.spent, &FieldError{Path: "request.authentication.password", Reason: "does not open the pfx (incorrect password)"}
		}
	}
	return b.spent, nil
}

// pfxParts is a parsed PKCS#12 file.
type pfxParts struct {
	pfx      p12PFX
	contents []p12ContentInfo
}

func parsePFX(data []byte) (*pfxParts, error) {
	var p pfxParts
	if err := unmarshalAll(data, &p.pfx); err != nil || !p.pfx.AuthSafe.ContentType.Equal(oidData) {
		return nil, errPfxUnreadable
	}
	var safe []byte
	if err := unmarshalAll(p.pfx.AuthSafe.Content.Bytes, &safe); err != nil {
		return nil, errPfxUnreadable
	}
	if err := unmarshalAll(safe, &p.contents); err != nil {
		return nil, errPfxUnreadable
	}
	return &p, nil
}

// visibleWork counts the MAC (twice for an empty password, which decoders
// retry), the encrypted contents and the encrypted keys in unencrypted
// contents.
func (p *pfxParts) visibleWork(emptyPassword bool) (*pfxBudget, error) {
	b := &pfxBudget{}
	if mac := p.pfx.MacData; len(mac.Mac.Algorithm.Algorithm) > 0 {
		it, blocks := macWork(mac)
		if emptyPassword {
			blocks *= 2
		}
		if err := b.spend(it, blocks); err != nil {
			return nil, err
		}
	}
	for _, ci := range p.contents {
		switch {
		case ci.ContentType.Equal(oidData):
			var plain []byte
			if err := unmarshalAll(ci.Content.Bytes, &plain); err != nil {
				continue
			}
			bags, err := parseBags(plain)
			if err != nil {
				continue
			}
			if err := bagsWork(b, bags); err != nil {
				return nil, err
			}
		case ci.ContentType.Equal(oidEncryptedData):
			var ed p12EncryptedData
			if err := unmarshalAll(ci.Content.Bytes, &ed); err != nil {
				continue
			}
			if err := b.spend(algorithmWork(ed.Info.Algorithm)); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

func parseBags(data []byte) ([]p12SafeBag, error) {
	var bags []p12SafeBag
	if err := unmarshalAll(data, &bags); err != nil {
		return nil, err
	}
	return bags, nil
}

// bagsWork counts the encrypted keys among bags.
func bagsWork(b *pfxBudget, bags []p12SafeBag) error {
	for _, bag := range bags {
		if !bag.ID.Equal(oidShroudedKey) {
			continue
		}
		var k p12EncryptedKey
		if err := unmarshalAll(bag.Value.Bytes, &k); err != nil {
			continue
		}
		if err := b.spend(algorithmWork(k.Algorithm)); err != nil {
			return err
		}
	}
	return nil
}

// macWork returns the iterations and hash blocks of a MAC's key
// derivation.
func macWork(mac p12MacData) (iterations, blocks int) {
	alg := mac.Mac.Algorithm
	switch {
	case alg.Algorithm.Equal(oidSHA1), alg.Algorithm.Equal(oidSHA256), alg.Algorithm.Equal(oidSHA512):
		return mac.Iterations, 1 // one block of the digest's size
	case !alg.Algorithm.Equal(oidPBMAC1):
		return 0, 0 // refused by the decoder before deriving
	}
	var params p12PBMAC1Params
	if unmarshalAll(alg.Parameters.FullBytes, &params) != nil || !params.KDF.Algorithm.Equal(oidPBKDF2) {
		return 0, 0
	}
	var kdf p12PBKDF2Params
	if unmarshalAll(params.KDF.Parameters.FullBytes, &kdf) != nil {
		return 0, 0
	}
	size := prfSize(kdf.PRF.Algorithm)
	if size == 0 || kdf.KeyLength <= 0 || kdf.KeyLength > 64 {
		return 0, 0 // refused by the decoder before deriving
	}
	return kdf.Iterations, (kdf.KeyLength + size - 1) / size
}

// algorithmWork returns the iterations and hash blocks of decrypting with
// a password-based encryption algorithm; 0, 0 for one the decoder does not
// know (and refuses before deriving).
func algorithmWork(alg pkix.AlgorithmIdentifier) (iterations, blocks int) {
	switch {
	case alg.Algorithm.Equal(oidPBE3DES):
		blocks = 3 // a 24-byte key (two SHA-1 blocks) and an IV
	case alg.Algorithm.Equal(oidPBERC2128), alg.Algorithm.Equal(oidPBERC240):
		blocks = 2 // a key and an IV
	case alg.Algorithm.Equal(oidPBES2):
		_, kdf, keyLen, ok := pbes2(alg)
		if !ok {
			return 0, 0
		}
		size := prfSize(kdf.PRF.Algorithm)
		return kdf.Iterations, (keyLen + size - 1) / size
	default:
		return 0, 0
	}
	var params p12PBEParams
	if unmarshalAll(alg.Parameters.FullBytes, &params) != nil {
		return 0, 0
	}
	return params.Iterations, blocks
}

// pbes2 reads PBES2 parameters with PBKDF2 and an AES-CBC scheme; ok is
// false for anything else.
func pbes2(alg pkix.AlgorithmIdentifier) (p p12PBES2Params, kdf p12PBKDF2Params, keyLen int, ok bool) {
	if unmarshalAll(alg.Parameters.FullBytes, &p) != nil || !p.KDF.Algorithm.Equal(oidPBKDF2) {
		return p, kdf, 0, false
	}
	if unmarshalAll(p.KDF.Parameters.FullBytes, &kdf) != nil || kdf.Salt.Tag != asn1.TagOctetString || prfSize(kdf.PRF.Algorithm) == 0 {
		return p, kdf, 0, false
	}
	switch {
	case p.Scheme.Algorithm.Equal(oidAES128CBC):
		keyLen = 16
	case p.Scheme.Algorithm.Equal(oidAES192CBC):
		keyLen = 24
	case p.Scheme.Algorithm.Equal(oidAES256CBC):
		keyLen = 32
	default:
		return p, kdf, 0, false
	}
	return p, kdf, keyLen, true
}

// prfSize is the output size of a PBKDF2 PRF (HMAC-SHA1 when absent); 0
// for one the decoder does not know.
func prfSize(prf asn1.ObjectIdentifier) int {
	switch {
	case prf == nil, prf.Equal(oidHMACSHA1):
		return sha1.Size
	case prf.Equal(oidHMACSHA256):
		return sha256.Size
	case prf.Equal(oidHMACSHA512):
		return sha512.Size
	}
	return 0
}

func prfHash(prf asn1.ObjectIdentifier) func() hash.Hash {
	switch {
	case prf.Equal(oidHMACSHA256):
		return sha256.New
	case prf.Equal(oidHMACSHA512):
		return sha512.New
	}
	return sha1.New
}

// pbeDecrypt decrypts data encrypted with a PKCS#12 or PBES2
// password-based algorithm and removes its padding. password is the
// BMPString of the password (or nil).
func pbeDecrypt(alg pkix.AlgorithmIdentifier, data, password []byte) ([]byte, error) {
	var block cipher.Block
	var iv []byte
	switch {
	case alg.Algorithm.Equal(oidPBES2):
		p, kdf, keyLen, ok := pbes2(alg)
		if !ok {
			return nil, errPfxUnreadable
		}
		// PBES2 takes the password as UTF-8 (RFC 8018), not as a BMPString.
		key, err := pbkdf2.Key(prfHash(kdf.PRF.Algorithm), bmpToString(password), kdf.Salt.Bytes, max(kdf.Iterations, 1), keyLen)
		if err != nil {
			return nil, err
		}
		if block, err = aes.NewCipher(key); err != nil {
			return nil, err
		}
		iv = p.Scheme.Parameters.Bytes
	default:
		var params p12PBEParams
		if unmarshalAll(alg.Parameters.FullBytes, &params) != nil {
			return nil, errPfxUnreadable
		}
		it := params.Iterations
		var err error
		switch {
		case alg.Algorithm.Equal(oidPBE3DES):
			block, err = des.NewTripleDESCipher(pkcs12KDF(password, params.Salt, it, 1, 24))
		case alg.Algorithm.Equal(oidPBERC2128):
			block = newRC2(pkcs12KDF(password, params.Salt, it, 1, 16), 128)
		case alg.Algorithm.Equal(oidPBERC240):
			block = newRC2(pkcs12KDF(password, params.Salt, it, 1, 5), 40)
		default:
			return nil, errPfxUnreadable
		}
		if err != nil {
			return nil, err
		}
		iv = pkcs12KDF(password, params.Salt, it, 2, 8)
	}
	bs := block.BlockSize()
	if len(iv) != bs || len(data) == 0 || len(data)%bs != 0 {
		return nil, errPfxUnreadable
	}
	out := make([]byte, len(data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(out, data)
	pad := int(out[len(out)-1])
	if pad == 0 || pad > bs {
		return nil, errPfxUnreadable
	}
	for _, c := range out[len(out)-pad:] {
		if int(c) != pad {
			return nil, errPfxUnreadable
		}
	}
	return out[:len(out)-pad], nil
}

// pkcs12KDF is the key derivation of RFC 7292 appendix B.2 with SHA-1:
// size bytes of purpose id (1 key, 2 IV, 3 MAC key).
func pkcs12KDF(password, salt []byte, iterations int, id byte, size int) []byte {
	const u, v = sha1.Size, 64
	fill := func(b []byte) []byte {
		if len(b) == 0 {
			return nil
		}
		n := v * ((len(b) + v - 1) / v)
		out := make([]byte, n)
		for i := range out {
			out[i] = b[i%len(b)]
		}
		return out
	}
	d := make([]byte, v)
	for i := range d {
		d[i] = id
	}
	in := append(fill(salt), fill(password)...)
	var out []byte
	for len(out) < size {
		h := sha1.New()
		h.Write(d)
		h.Write(in)
		a := h.Sum(nil)
		for range max(iterations, 1) - 1 {
			s := sha1.Sum(a)
			a = s[:]
		}
		out = append(out, a...)
		if len(out) >= size {
			break
		}
		// I_j = (I_j + B + 1) mod 2^(8v) for each v-byte block of I,
		// where B is a repeated to v bytes.
		bb := fill(a)
		for j := 0; j < len(in); j += v {
			carry := 1
			for k := v - 1; k >= 0; k-- {
				s := int(in[j+k]) + int(bb[k]) + carry
				in[j+k], carry = byte(s), s>>8
			}
		}
	}
	return out[:size]
}

// bmpPassword encodes password as a zero-terminated BMPString, as PKCS#12
// does; ok is false when it has characters outside the BMP.
func bmpPassword(password string) ([]byte, bool) {
	out := make([]byte, 0, 2*len(password)+2)
	for _, r := range password {
		if r1, _ := utf16.EncodeRune(r); r1 != '\uFFFD' {
			return nil, false
		}
		out = append(out, byte(r>>8), byte(r))
	}
	return append(out, 0, 0), true
}

// bmpToString decodes a (zero-terminated) BMPString.
func bmpToString(b []byte) string {
	if n := len(b); n >= 2 && b[n-1] == 0 && b[n-2] == 0 {
		b = b[:n-2]
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	return string(utf16.Decode(u))
}

// unmarshalAll is asn1.Unmarshal that refuses trailing data.
func unmarshalAll(data []byte, v any) error {
	rest, err := asn1.Unmarshal(data, v)
	if err == nil && len(rest) > 0 {
		err = errors.New("trailing data")
	}
	return err
}
