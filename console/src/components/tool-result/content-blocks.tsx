/**
 * An MCP tool's result, block by block, as a person reads it: text as written (line breaks kept),
 * images shown, audio with a player, resource links as links (web addresses only), embedded
 * resources as text or a download, structured content as formatted JSON. A refusal (isError) is
 * said to be one.
 */
import { useEffect, useState } from 'react';
import { type Block, dataUrl, fileNameOf, type McpResult, webLink } from './content';

/** A download of base64 content, through an object URL made when shown and let go when gone. */
function Download({ blob, mimeType, uri }: { blob: string; mimeType: string | undefined; uri: string }) {
  const [href, setHref] = useState<string>();
  useEffect(() => {
    let bytes: Uint8Array<ArrayBuffer>;
    try {
      bytes = Uint8Array.from(atob(blob.replace(/\s+/g, '')), (c) => c.charCodeAt(0));
    } catch {
      return undefined;
    }
    const url = URL.createObjectURL(new Blob([bytes], { type: mimeType ?? 'application/octet-stream' }));
    setHref(url);
    return () => URL.revokeObjectURL(url);
  }, [blob, mimeType]);
  const name = fileNameOf(uri);
  if (href === undefined) {
    return <p className="hint">The content of {name} could not be read.</p>;
  }
  return (
    <a href={href} download={name}>
      Download {name}
      {mimeType === undefined ? null : <span className="muted"> ({mimeType})</span>}
    </a>
  );
}

function BlockView({ block, index, tool }: { block: Block; index: number; tool: string }) {
  switch (block.type) {
    case 'text':
      return <p className="result-text">{block.text}</p>;
    case 'image': {
      const src = dataUrl(block.data, block.mimeType, 'image');
      return src === undefined ? (
        <p className="hint">An image the console cannot show ({block.mimeType}).</p>
      ) : (
        <img className="result-image" src={src} alt={`Image ${index + 1} returned by ${tool}`} />
      );
    }
    case 'audio': {
      const src = dataUrl(block.data, block.mimeType, 'audio');
      return src === undefined ? (
        <p className="hint">A sound the console cannot play ({block.mimeType}).</p>
      ) : (
        <audio controls preload="metadata" src={src} aria-label={`Sound ${index + 1} returned by ${tool}`}>
          Your browser cannot play this sound.
        </audio>
      );
    }
    case 'resource_link': {
      const href = webLink(block.uri);
      const name = block.title ?? block.name;
      return (
        <p>
          {href === undefined ? (
            <>
              <strong>{name}</strong> <code>{block.uri}</code>
            </>
          ) : (
            <a href={href} target="_blank" rel="noopener noreferrer">
              {name}
            </a>
          )}
          {block.description === undefined ? null : <> — {block.description}</>}
        </p>
      );
    }
    case 'resource':
      return (
        <figure className="result-resource">
          <figcaption>
            <code>{block.uri}</code>
          </figcaption>
          {block.text !== undefined ? (
            <pre tabIndex={0} aria-label={`Content of ${block.uri}`}>
              {block.text}
            </pre>
          ) : block.blob !== undefined ? (
            <Download blob={block.blob} mimeType={block.mimeType} uri={block.uri} />
          ) : (
            <p className="hint">No content.</p>
          )}
        </figure>
      );
    default:
      return (
        <pre tabIndex={0} aria-label={`Part ${index + 1} of the result`}>
          {JSON.stringify(block.value, null, 2)}
        </pre>
      );
  }
}

/** The blocks of an MCP result, in order, then its structured content. */
export function ContentBlocks({ result, tool, site }: { result: McpResult; tool: string; site: string }) {
  return (
    <div className={result.isError ? 'mcp-result refused' : 'mcp-result'}>
      {result.isError ? (
        <p role="alert">
          <strong>{site} refused the call.</strong> What it said:
        </p>
      ) : null}
      {result.blocks.length === 0 && result.structured === undefined ? <p className="hint">No content.</p> : null}
      {result.blocks.length === 0 ? null : (
        <ol className="result-blocks" aria-label={`Content returned by ${tool}`}>
          {result.blocks.map((block, i) => (
            <li key={i}>
              <BlockView block={block} index={i} tool={tool} />
            </li>
          ))}
        </ol>
      )}
      {result.structured === undefined ? null : (
        <>
          <h4>Structured content</h4>
          <pre tabIndex={0} aria-label={`Structured content returned by ${tool}`}>
            {JSON.stringify(result.structured, null, 2)}
          </pre>
        </>
      )}
    </div>
  );
}
