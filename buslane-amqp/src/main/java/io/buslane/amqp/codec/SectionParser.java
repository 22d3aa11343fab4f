package io.buslane.amqp.codec;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.messaging.AmqpSequence;
import org.apache.qpid.proton.amqp.messaging.AmqpValue;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.DeliveryAnnotations;
import org.apache.qpid.proton.amqp.messaging.Footer;
import org.apache.qpid.proton.amqp.messaging.Header;
import org.apache.qpid.proton.amqp.messaging.MessageAnnotations;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.codec.DecoderImpl;

/**
 * Reads the sections of an encoded message with proton-j's decoder, checking that they come in the order the
 * AMQP specification requires, and notes where the body and the footer are.
 */
final class SectionParser {

    /** The sections of one message as read, plus where its body starts. */
    static final class Sections {
        Header header;
        MessageAnnotations messageAnnotations;
        Properties properties;
        ApplicationProperties applicationProperties;
        /** Absolute offset of the first section after application-properties, or -1 when there is none. */
        int bodyStart = -1;
        int dataCount;
        int valueCount;
        int sequenceCount;
        /** The data sections' values (only when collecting, for batches). */
        List<Binary> data;
        /** The footer and its absolute offset, when the message has one. */
        Footer footer;
        int footerStart = -1;
        int footerEnd = -1;
        /** Encoded bytes of the application-properties section (0 when there is none). */
        int applicationPropertiesBytes;
    }

    // Section ranks: the order sections must appear in.
    private static final int RANK_HEADER = 1;
    private static final int RANK_DELIVERY_ANNOTATIONS = 2;
    private static final int RANK_MESSAGE_ANNOTATIONS = 3;
    private static final int RANK_PROPERTIES = 4;
    private static final int RANK_APPLICATION_PROPERTIES = 5;
    private static final int RANK_BODY = 6;
    private static final int RANK_FOOTER = 7;

    private SectionParser() {
    }

    /**
     * Reads the sections of the {@code length} bytes at {@code offset}, keeping the data sections' values when
     * {@code collectData} (for batches); {@code what} names the payload in error messages.
     */
    static Sections parse(byte[] bytes, int offset, int length, boolean collectData, String what)
            throws AmqpDecodeException {
        if (length == 0) {
            throw new AmqpDecodeException("malformed " + what + ": no sections (empty payload)");
        }
        ProtonCodecs.Codec codec = ProtonCodecs.codec();
        DecoderImpl decoder = codec.decoder;
        Sections s = new Sections();
        if (collectData) {
            s.data = new ArrayList<>();
        }
        int end = offset + length;
        int start = offset;
        int rank = 0;
        try {
            decoder.setByteBuffer(ByteBuffer.wrap(bytes, offset, length));
            while (decoder.getBuffer().position() < end) {
                start = decoder.getBuffer().position();
                int dataEnd = collectData ? -1 : dataSectionEnd(bytes, start, end);
                Object section;
                if (dataEnd > 0) {
                    decoder.getBuffer().position(dataEnd); // a data section's bytes are opaque: not copied out
                    section = SKIPPED_DATA;
                } else {
                    section = decoder.readObject();
                }
                int sectionRank = rankOf(section);
                if (section instanceof Footer f) {
                    // a footer is taken wherever it comes (the JavaScript SDK's library writes it before the body,
                    // the service accepts that), once; it is kept after the body sections
                    if (s.footer != null) {
                        throw new AmqpDecodeException("malformed " + what + ": section footer at offset "
                                + (start - offset) + " is out of order or repeated");
                    }
                    s.footer = f;
                    s.footerStart = start;
                    s.footerEnd = decoder.getBuffer().position();
                    rank = Math.max(rank, RANK_APPLICATION_PROPERTIES); // only body sections may follow it
                    continue;
                }
                if (sectionRank == 0) {
                    throw new AmqpDecodeException("malformed " + what + ": expected a message section at offset "
                            + (start - offset) + " but found " + AmqpValues.describe(section));
                }
                boolean repeatableBody = sectionRank == RANK_BODY && !(section instanceof AmqpValue);
                if (sectionRank < rank || (sectionRank == rank && !repeatableBody)) {
                    throw new AmqpDecodeException("malformed " + what + ": section " + sectionName(section)
                            + " at offset " + (start - offset) + " is out of order or repeated");
                }
                rank = sectionRank;
                if (sectionRank >= RANK_BODY && s.bodyStart < 0) {
                    s.bodyStart = start;
                }
                if (section instanceof Header h) {
                    s.header = h;
                } else if (section instanceof MessageAnnotations ma) {
                    s.messageAnnotations = ma;
                } else if (section instanceof Properties p) {
                    s.properties = p;
                } else if (section instanceof ApplicationProperties ap) {
                    s.applicationProperties = ap;
                    s.applicationPropertiesBytes = decoder.getBuffer().position() - start;
                } else if (section instanceof Data d) {
                    s.dataCount++;
                    if (collectData) {
                        s.data.add(d.getValue() == null ? new Binary(new byte[0]) : d.getValue());
                    }
                } else if (section instanceof AmqpValue) {
                    s.valueCount++;
                } else if (section instanceof AmqpSequence) {
                    s.sequenceCount++;
                }
                // delivery-annotations need no handling: dropped
                int kinds = (s.dataCount > 0 ? 1 : 0) + (s.valueCount > 0 ? 1 : 0) + (s.sequenceCount > 0 ? 1 : 0);
                if (kinds > 1) {
                    throw new AmqpDecodeException("malformed " + what + ": body section " + sectionName(section)
                            + " at offset " + (start - offset) + " mixes body kinds (the body is data sections, "
                            + "amqp-sequence sections or a single amqp-value)");
                }
            }
            if (decoder.getBuffer().position() != end) {
                throw new AmqpDecodeException("malformed " + what + ": the last section overruns the payload");
            }
            if (s.footer != null && s.bodyStart < 0) {
                s.bodyStart = s.footerStart; // no body section: the verbatim body is the footer alone
            }
            return s;
        } catch (AmqpDecodeException e) {
            throw e;
        } catch (RuntimeException | StackOverflowError e) {
            throw new AmqpDecodeException("malformed " + what + ": cannot decode the section at offset "
                    + (start - offset) + ": " + describe(e), e);
        } finally {
            decoder.setBuffer(null);
            codec.decodedBytes += length;
        }
    }

    /** Stands for a data section that {@link #parse} stepped over without decoding its binary. */
    private static final Data SKIPPED_DATA = new Data(null);

    /** Implements {@link AmqpCodec#dataSectionEnd}. */
    static int dataSectionEnd(byte[] b, int start, int end) {
        if (end - start < 5 || b[start] != 0x00 || b[start + 1] != 0x53 || b[start + 2] != 0x75) {
            return -1;
        }
        long sectionEnd;
        if (b[start + 3] == (byte) 0xa0) {
            sectionEnd = start + 5L + (b[start + 4] & 0xff);
        } else if (b[start + 3] == (byte) 0xb0 && end - start >= 8) {
            sectionEnd = start + 8L + (((b[start + 4] & 0xffL) << 24) | ((b[start + 5] & 0xff) << 16)
                    | ((b[start + 6] & 0xff) << 8) | (b[start + 7] & 0xff));
        } else {
            return -1;
        }
        return sectionEnd <= end ? (int) sectionEnd : -1;
    }

    private static int rankOf(Object section) {
        if (section instanceof Header) {
            return RANK_HEADER;
        } else if (section instanceof DeliveryAnnotations) {
            return RANK_DELIVERY_ANNOTATIONS;
        } else if (section instanceof MessageAnnotations) {
            return RANK_MESSAGE_ANNOTATIONS;
        } else if (section instanceof Properties) {
            return RANK_PROPERTIES;
        } else if (section instanceof ApplicationProperties) {
            return RANK_APPLICATION_PROPERTIES;
        } else if (section instanceof Data || section instanceof AmqpValue || section instanceof AmqpSequence) {
            return RANK_BODY;
        } else if (section instanceof Footer) {
            return RANK_FOOTER;
        }
        return 0;
    }

    private static String sectionName(Object section) {
        if (section instanceof Header) {
            return "header";
        } else if (section instanceof DeliveryAnnotations) {
            return "delivery-annotations";
        } else if (section instanceof MessageAnnotations) {
            return "message-annotations";
        } else if (section instanceof Properties) {
            return "properties";
        } else if (section instanceof ApplicationProperties) {
            return "application-properties";
        } else if (section instanceof Data) {
            return "data";
        } else if (section instanceof AmqpValue) {
            return "amqp-value";
        } else if (section instanceof AmqpSequence) {
            return "amqp-sequence";
        } else if (section instanceof Footer) {
            return "footer";
        }
        return AmqpValues.describe(section);
    }

    private static String describe(Throwable e) {
        if (e instanceof StackOverflowError) {
            return "values nested too deeply";
        }
        if (e instanceof BufferUnderflowException || e instanceof IndexOutOfBoundsException) {
            return "truncated (an encoded value extends past the end of the message)";
        }
        String message = e.getMessage();
        String kind = e.getClass().getSimpleName();
        return message == null ? kind : kind + ": " + message;
    }
}
