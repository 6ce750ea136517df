package deployplan

import "github.com/hanzoai/deploy-web/internal/strictyaml"

// unmarshalCaptureEntry decodes line lineNo of the capture index
// (CaptureIndexFile) into e, exactly (strictyaml): another spelling of a
// key ("Namespace"), a key written twice or an unknown key is an error
// naming the line and the key, so an entry means one thing to every
// reader. A line is read under a budget of maxIndexLineNodes values.
func unmarshalCaptureEntry(line string, lineNo int, e *captureEntry) error {
	return strictyaml.UnmarshalJSON([]byte(line), e, strictyaml.Options{LineOffset: lineNo - 1, MaxNodes: maxIndexLineNodes})
}

// maxIndexLineNodes bounds the JSON values of one index line: an entry
// is an object of eight keys and their values.
const maxIndexLineNodes = 64
