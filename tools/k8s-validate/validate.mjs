// Validates Kubernetes manifests offline, against the API schemas of pinned npm packages:
//
//   node tools/k8s-validate/validate.mjs FILE.yaml...     (after `npm ci` in tools/k8s-validate)
//
// Two checks per YAML document, both from the same packages (package.json pins them):
//  1. Schema: the document's model validates itself (kubernetes-models, generated from the
//     Kubernetes OpenAPI spec; @kubernetes-models/prometheus-operator, generated from the
//     operator's Go API types). This catches wrong types, missing required fields, bad enum
//     values and formats. These schemas accept unknown fields, as the OpenAPI spec does.
//  2. Strict fields: the document, as a TypeScript object literal typed with the package's
//     interface for its kind, is type-checked by the TypeScript compiler. An object literal may
//     only name known properties ("excess property checking", at every depth), so an unknown or
//     misspelt field is an error here, as `kubectl apply --validate=strict` makes it on a server.
// A kind none of the packages models is an error, never a silent pass. Exit 0 when every
// document passes both, 1 otherwise (every problem printed), 2 for a usage error.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { parseAllDocuments } from "yaml";

const TOOL_DIR = dirname(fileURLToPath(import.meta.url));

// The packages the checks come from, and what they were generated from (each package's
// CHANGELOG: kubernetes-models 5.0.0 "Update to Kubernetes v1.36.0"; prometheus-operator 6.0.0
// "Types now sourced from upstream Go packages — prometheus-operator v0.91.0"). The versions are
// checked against what is installed, so this statement cannot outlive an upgrade.
const SCHEMA_SOURCES = [
  { name: "kubernetes-models", version: "5.1.0", from: "Kubernetes v1.36.0 OpenAPI" },
  {
    name: "@kubernetes-models/prometheus-operator",
    version: "6.0.0",
    from: "prometheus-operator v0.91.0 API types",
  },
  { name: "typescript", version: "6.0.3", from: "strict field check" },
];

// apiVersion -> the package module that holds its kinds. The core group has no group name.
function modelModule(apiVersion, kind) {
  if (!/^[A-Za-z0-9]+$/.test(kind)) return null;
  if (apiVersion === "v1") return `kubernetes-models/v1/${kind}`;
  const [group, version, extra] = apiVersion.split("/");
  if (!group || !version || extra !== undefined) return null;
  if (group === "monitoring.coreos.com") {
    return `@kubernetes-models/prometheus-operator/${group}/${version}/${kind}`;
  }
  // Core API groups: "apps", "rbac.authorization.k8s.io", ... as kubernetes-models lays them out.
  return `kubernetes-models/${group}/${version}/${kind}`;
}

function installedVersion(name) {
  const file = join(TOOL_DIR, "node_modules", name, "package.json");
  return JSON.parse(readFileSync(file, "utf8")).version;
}

function describe(doc) {
  const meta = doc?.metadata ?? {};
  const name = meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name;
  return `${doc?.apiVersion} ${doc?.kind} ${name ?? "(no name)"}`;
}

// Parses every file into { file, index, doc } entries; YAML errors are problems of their own.
function loadDocuments(files, problems) {
  const entries = [];
  for (const file of files) {
    let text;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      problems.push(`${file}: cannot read: ${err.message}`);
      continue;
    }
    // uniqueKeys (the default) makes a key given twice an error, as the API server's strict
    // decoding does; YAML 1.2 core schema, so `yes` is a string, not a boolean.
    const documents = parseAllDocuments(text, { prettyErrors: true, version: "1.2" });
    let count = 0;
    documents.forEach((document, index) => {
      const where = `${file} document ${index + 1}`;
      for (const e of [...document.errors, ...document.warnings]) {
        problems.push(`${where}: YAML: ${e.message}`);
      }
      if (document.errors.length > 0) return;
      const doc = document.toJS();
      if (doc === null || doc === undefined) return;  // only comments
      if (typeof doc !== "object" || Array.isArray(doc)) {
        problems.push(`${where}: not a mapping`);
        return;
      }
      entries.push({ file, index: index + 1, doc });
      count++;
    });
    if (count === 0) problems.push(`${file}: no Kubernetes object in it`);
  }
  return entries;
}

// Check 1: the package's own validator. Returns the module name, or null when nothing models it.
async function checkSchema(entry, problems) {
  const { doc } = entry;
  const where = `${entry.file} document ${entry.index} (${describe(doc)})`;
  const moduleName =
    typeof doc.apiVersion === "string" && typeof doc.kind === "string"
      ? modelModule(doc.apiVersion, doc.kind)
      : null;
  let Model;
  try {
    Model = moduleName ? (await import(moduleName))[doc.kind] : undefined;
  } catch {
    Model = undefined;
  }
  if (!Model) {
    problems.push(`${where}: no schema for apiVersion ${doc.apiVersion} kind ${doc.kind}`);
    return null;
  }
  try {
    new Model(doc).validate();
  } catch (err) {
    const details = err.errors
      ? err.errors.map((e) => `${e.instancePath || "/"} ${e.message}${
          e.params?.allowedValues ? ` ${JSON.stringify(e.params.allowedValues)}` : ""}`)
      : [err.message];
    for (const d of details) problems.push(`${where}: schema: ${d}`);
  }
  return moduleName;
}

// Check 2: every document becomes `const doc: I<Kind> = <JSON>;` in a virtual file beside
// node_modules, so the compiler resolves the package types as an installed program would.
function checkStrictFields(checked, problems) {
  const options = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    skipLibCheck: true,
    types: [],
  };
  const sources = new Map();
  const origin = new Map();
  checked.forEach(({ entry, moduleName }, n) => {
    const path = join(TOOL_DIR, "__manifests__", `document${n}.ts`);
    const body = JSON.stringify(entry.doc, null, 2);
    sources.set(path, `import type { I${entry.doc.kind} as T } from "${moduleName}";\n` +
                          `export const doc: T = ${body};\n`);
    origin.set(path, entry);
  });
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, onError, create) =>
    sources.has(name) ? ts.createSourceFile(name, sources.get(name), language)
                      : getSourceFile(name, language, onError, create);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => sources.has(name) || fileExists(name);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => sources.get(name) ?? readFile(name);

  const program = ts.createProgram([...sources.keys()], options, host);
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(d.messageText, "\n  ");
    const entry = d.file ? origin.get(d.file.fileName) : undefined;
    if (!entry) {
      problems.push(`typescript: ${message}`);
      continue;
    }
    // The offending line of the document as JSON names the field.
    const { line } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
    const text = d.file.text.split("\n")[line].trim();
    problems.push(`${entry.file} document ${entry.index} (${describe(entry.doc)}): ` +
                  `unknown or mistyped field at \`${text}\`: ${message}`);
  }
}

async function main(files) {
  if (files.length === 0) {
    console.error("usage: node validate.mjs MANIFEST.yaml...");
    return 2;
  }
  const problems = [];
  for (const source of SCHEMA_SOURCES) {
    const installed = installedVersion(source.name);
    if (installed !== source.version) {
      problems.push(`${source.name} ${installed} is installed, ${source.version} expected ` +
                    "(run npm ci in tools/k8s-validate, or update SCHEMA_SOURCES)");
    }
  }
  console.log("schemas: " + SCHEMA_SOURCES.map((s) => `${s.name} ${s.version} (${s.from})`)
      .join(", "));
  const entries = loadDocuments(files, problems);
  const checked = [];
  for (const entry of entries) {
    const before = problems.length;
    const moduleName = await checkSchema(entry, problems);
    if (moduleName) checked.push({ entry, moduleName });
    if (problems.length === before) {
      console.log(`schema ok: ${entry.file} document ${entry.index} ` +
                  `(${describe(entry.doc)})`);
    }
  }
  const beforeStrict = problems.length;
  checkStrictFields(checked, problems);
  if (problems.length === beforeStrict) {
    console.log(`strict fields ok: ${checked.length} documents`);
  }
  for (const p of problems) console.log(`error: ${p}`);
  console.log(`${entries.length} documents, ${problems.length} problems`);
  return problems.length === 0 ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
